// Workload "deferred-scale": one periodic pass of the deferred
// scan over a huge deferred queue of which few messages are due.
//
// 200,000 one-recipient messages sit in deferred/ for one destination (an
// smtp-sink, up all along), with the times a queue manager gives a file it
// defers: access time when it was deferred (now), modification time when it
// may be tried again.  For 1 % of them (every hundredth file) that is
// `due_after` seconds after the files were put there, for the rest an hour
// or more later.  The queue manager starts with queue_run_delay = 60 s:
// its start-up pass finds nothing due, the 1 % come due while it waits, and
// its next periodic pass, queue_run_delay after its start, finds them.
// The figures: the queue manager's CPU from 2 s before that pass until the
// due messages are delivered (the whole pass: the directory walk, the
// look at each file, taking and delivering the due ones), and the first
// and the last due message's delivery after the pass began (the queue
// manager's start plus queue_run_delay, as its timer has it).
//
// The queue is made fast: smtp-source into a stock instance without a queue
// manager, once per session; each run copies those incoming files into its
// deferred/ and sets their times.
#include "clock.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "qmgr_probe.hpp"
#include "queue_template.hpp"
#include "workloads.hpp"

#include <ctime>
#include <utime.h>

namespace bench {
namespace {

constexpr int queue_run_delay = 60; // seconds
constexpr int due_after = 45;       // seconds after populate(): before the timed pass
constexpr int due_every = 100;      // 1 % due

// Waits for the timed pass and samples the queue manager's CPU just before.
class PassInjection : public Injection {
  public:
    explicit PassInjection(const compat::Instance& inst) : probe_(inst) {}

    bool step() override {
        if (pass_at_ == 0) {
            probe_.await_start(std::chrono::seconds(10));
            pass_at_ = probe_.usage().started + queue_run_delay;
        }
        if (boot_seconds() < pass_at_ - 2) return false;
        probe_.sample();
        cpu_before = probe_.usage().cpu_seconds;
        started = finished = pass_at_;
        return true;
    }

    double cpu_before = 0; // the queue manager's CPU 2 s before the pass

  private:
    QmgrProbe probe_;
    double pass_at_ = 0;
};

class DeferredScale : public Workload {
  public:
    explicit DeferredScale(const Session& s)
        : session_(s), messages_(scaled(200000, s.scale, due_every)) {}

    std::string name() const override { return "deferred-scale"; }
    std::string describe() const override {
        return with_commas(messages_) +
               " one-recipient messages in deferred, 1 % of them due before the queue "
               "manager's first periodic pass (queue_run_delay = " +
               std::to_string(queue_run_delay) +
               " s), the rest an hour or more later; the destination, an smtp-sink, is up";
    }
    // The due messages; the rest stays in deferred.
    std::uint64_t recipients() const override { return due(); }
    std::uint64_t deferred_at_end() const override { return messages_ - due(); }
    int timeout() const override { return 300 + static_cast<int>(messages_ / 200); }
    std::string measured_from() const override {
        return "the periodic pass (queue-manager start + queue_run_delay)";
    }

    void prepare() override {
        template_ =
            std::make_unique<QueueTemplate>(incoming_template(name(), messages_), session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {sink_spec("a")}; }
    MainCf main_cf(const RunContext& run) const override {
        MainCf cf = relay_to(run.sink_ports[0]);
        cf.emplace_back("queue_run_delay", std::to_string(queue_run_delay) + "s");
        return cf;
    }
    // The copies with the times a deferral gives them.
    void populate(const RunContext& run) const override {
        auto paths = copy_incoming_to_deferred(*template_, run.inst);
        std::time_t now = std::time(nullptr);
        for (size_t i = 0; i < paths.size(); ++i) {
            struct utimbuf t;
            t.actime = now;
            t.modtime = i % due_every == 0 ? now + due_after
                                           : now + 3600 + static_cast<std::time_t>(i % 3600);
            if (::utime(paths[i].c_str(), &t) != 0) throw compat::sys_error("utime " + paths[i]);
        }
    }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        return std::make_unique<PassInjection>(run.inst);
    }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"pass_cpu", "queue-manager CPU over the pass (s)", 2}};
    }
    void add_metrics(const DeliveryWatch&, const Injection* inj, Metrics& m) const override {
        if (const auto* p = dynamic_cast<const PassInjection*>(inj))
            m["pass_cpu"] = m["cpu"] - p->cpu_before;
    }

  private:
    std::uint64_t due() const { return (messages_ + due_every - 1) / due_every; }

    Session session_;
    std::uint64_t messages_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_deferred_scale(const Session& session) {
    return std::make_unique<DeferredScale>(session);
}

} // namespace bench
