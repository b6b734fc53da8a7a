// Workload "restart-active": the queue manager crashes with a
// full active queue and master starts a new one.
//
// 20,000 one-recipient messages wait in incoming for one destination, an
// smtp-sink that at first accepts connections and says nothing (a greeting
// delayed by an hour), so that the queue manager takes every message into
// active/ (qmgr_message_active_limit is 20,000) and delivers none: the
// first few deliveries hang on the silent sink (5, the initial destination
// concurrency, which grows only with deliveries that succeed).  Once
// active/ holds all of them and incoming/ none, the queue manager is killed
// with SIGKILL, as in a crash, and master reaps it.  Then the sink is
// restarted as a live one (the hanging deliveries lose their connection and
// are deferred by their agents, with nobody to tell; the run waits until
// they have let go of their files), and the trigger that
// cleanup sends when new mail arrives ("I") is written to public/qmgr:
// master starts a new queue manager on it, as it would on the next
// message's arrival.  The run is measured from that trigger: when the first
// message is delivered and when the last one is, and the new queue
// manager's CPU time and peak RSS.  Stock moves every file in active/ back
// to incoming/ before it takes them again.
#include "actions.hpp"
#include "clock.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "qmgr_probe.hpp"
#include "queue_template.hpp"
#include "sink.hpp"
#include "workloads.hpp"

#include <csignal>
#include <sys/stat.h>

namespace bench {
namespace {

// The silent sink's arguments: the greeting waits longer than any run.
const std::vector<std::string> silent = {"-W", "connect:3600"};

// Waits for active/ to fill, kills the queue manager, brings the sink to
// life and triggers the restart.
class CrashInjection : public Injection {
  public:
    CrashInjection(const RunContext& run, std::uint64_t messages)
        : inst_(run.inst), sink_(*run.sinks.at(0)), probe_(run.inst), messages_(messages) {}

    bool step() override {
        double now = boot_seconds();
        if (now < next_look_) return false;
        next_look_ = now + 0.2;
        std::string q = inst_.queue_dir();
        if (compat::count_files(q + "/incoming") != 0 ||
            compat::count_files(q + "/active") != messages_)
            return false;
        probe_.await_start(std::chrono::seconds(10));
        pid_t pid = probe_.usage().pid;
        ::kill(pid, SIGKILL);
        await_reaped(pid);
        // Nothing moves files in or out of active/ with no queue manager.
        active_at_kill = static_cast<double>(compat::count_files(q + "/active"));
        if (active_at_kill != static_cast<double>(messages_))
            throw compat::Error("expected " + std::to_string(messages_) +
                                " files in active/ at the kill, found " +
                                std::to_string(static_cast<std::uint64_t>(active_at_kill)));
        sink_.stop();
        sink_.start(std::vector<std::string>{});
        await_unlocked(q + "/active");
        started = finished = boot_seconds();
        compat::send_trigger(q + "/public/qmgr", "I");
        qmgr_restarted = true;
        return true;
    }

    double active_at_kill = 0;

  private:
    // Until master has reaped `pid` (the next queue manager must not be
    // mistaken for it).
    void await_reaped(pid_t pid) const {
        double until = boot_seconds() + 10;
        struct stat st;
        while (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0) {
            if (boot_seconds() > until)
                throw compat::Error("expected master to reap the killed queue manager (pid " +
                                    std::to_string(pid) + ") within 10 s, found it still there");
            pause(0.01);
        }
    }

    // Until no agent holds a lock on a file in `dir`: the deliveries that
    // hung have given up (a new queue manager would otherwise find their
    // files locked and defer them).
    static void await_unlocked(const std::string& dir) {
        double until = boot_seconds() + 30;
        while (compat::count_locked_files(dir) != 0) {
            if (boot_seconds() > until)
                throw compat::Error("expected the agents to let go of the files in " + dir +
                                    " within 30 s, found some still locked");
            pause(0.05);
        }
    }

    const compat::Instance& inst_;
    compat::Sink& sink_;
    QmgrProbe probe_;
    std::uint64_t messages_;
    double next_look_ = 0;
};

class RestartActive : public Workload {
  public:
    explicit RestartActive(const Session& s) : session_(s), messages_(scaled(20000, s.scale)) {}

    std::string name() const override { return "restart-active"; }
    std::string describe() const override {
        return with_commas(messages_) +
               " one-recipient messages in active/ (taken in while the destination, an "
               "smtp-sink, said nothing) when the queue manager is killed with SIGKILL; then "
               "the sink comes to life and new mail's trigger (I) makes master start a new "
               "queue manager";
    }
    std::uint64_t recipients() const override { return messages_; }
    int timeout() const override { return 300 + static_cast<int>(messages_ / 20); }
    // The deliveries that hung on the silent sink are deferred by their agents.
    bool deferrals_expected() const override { return true; }
    std::string measured_from() const override { return "the restart trigger"; }

    void prepare() override {
        template_ =
            std::make_unique<QueueTemplate>(incoming_template(name(), messages_), session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {sink_spec("a", silent)}; }
    MainCf main_cf(const RunContext& run) const override { return relay_to(run.sink_ports[0]); }
    void populate(const RunContext& run) const override { template_->copy_into(run.inst); }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        return std::make_unique<CrashInjection>(run, messages_);
    }
    std::vector<MetricDef> extra_metrics() const override {
        return {{"active_at_kill", "files in active/ at the kill", 0}};
    }
    void add_metrics(const DeliveryWatch&, const Injection* inj, Metrics& m) const override {
        if (const auto* c = dynamic_cast<const CrashInjection*>(inj))
            m["active_at_kill"] = c->active_at_kill;
    }

  private:
    Session session_;
    std::uint64_t messages_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_restart_active(const Session& session) {
    return std::make_unique<RestartActive>(session);
}

} // namespace bench
