// Workload "dead-backlog" (the dead backlog): 100,000
// one-recipient messages in deferred for 10 dead destinations (loopback
// ports 1 to 10, where nothing listens), all due now, while 5,000 fresh
// one-recipient messages arrive for a live one (smtp-sink), 50 per second.
// (One SMTP session at 100 per second ran at the limit of this 2-core
// machine: its submissions fell behind even with no backlog to take, so
// the time from submission measured the injector rather than the queue
// manager.)
//
// A run has two phases.  First the queue manager takes the backlog once
// (its first pass after start) and defers it: cqmgr learns the messages
// it deferred itself, and both leave the ten destinations dead (for
// minimal_backoff_time = 1 h).  That pass is not measured.  Then every
// deferred file is made due again, a deferred scan is asked for (D), and
// the fresh mail starts arriving: the measured pass.  Stock moves each due
// file through active again; cqmgr with cqmgr_dead_backlog = yes leaves
// them in place.  The run ends when the fresh mail is delivered and the
// backlog is back in deferred.  The figures: the fresh messages' delay=
// (from their arrival in the queue), their time from when each was due to
// be submitted to when its delivery was seen (which also counts a server
// slow to accept them), and the queue manager's CPU over the measured pass.
//
// The backlog is made fast: smtp-source into a stock instance without a
// queue manager (as the flush workload), once per session; each run copies
// those incoming files into its deferred/ (hashed as Postfix hashes short
// queue IDs, by their first character).
#include "actions.hpp"
#include "clock.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "mail_setup.hpp"
#include "paced_injection.hpp"
#include "qmgr_probe.hpp"
#include "queue_template.hpp"
#include "workloads.hpp"

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace bench {
namespace {

namespace fs = std::filesystem;

constexpr int dead_destinations = 10;
constexpr double fresh_per_second = 50;

// dead<K>.example -> smtp:[127.0.0.1]:<K+1>: privileged loopback ports that
// no test listens on, so every connection is refused at once.
std::string dead_domain(int k) {
    return "dead" + std::to_string(k) + ".example";
}

// How many files below `dir` have an mtime later than `after`.
std::uint64_t count_later(const std::string& dir, std::time_t after) {
    std::uint64_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        struct stat st;
        if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0 && st.st_mtime > after) ++n;
    }
    return n;
}

// Waits out the unmeasured first pass, then makes the backlog due, asks
// for a deferred scan and sends the fresh mail, paced.
class BacklogInjection : public Injection {
  public:
    BacklogInjection(const compat::Instance& inst, std::uint64_t backlog,
                     std::unique_ptr<PacedInjection> fresh)
        : inst_(inst), probe_(inst), backlog_(backlog), fresh_(std::move(fresh)) {}

    bool step() override {
        double now = boot_seconds();
        if (!measuring_) {
            if (now < next_look_) return false;
            next_look_ = now + 2;
            // The first pass is over once every file waits again and
            // nothing is in active or incoming.
            std::string q = inst_.queue_dir();
            if (compat::count_files(q + "/active") != 0 ||
                compat::count_files(q + "/incoming") != 0 ||
                count_later(q + "/deferred", std::time(nullptr) + 60) != backlog_)
                return false;
            backdate_files(q + "/deferred", 60);
            probe_.await_start(std::chrono::seconds(10));
            probe_.sample();
            cpu_before = probe_.usage().cpu_seconds;
            compat::send_trigger(q + "/public/qmgr", "D");
            measuring_ = true;
        }
        bool done = fresh_->step();
        started = fresh_->started;
        finished = fresh_->finished;
        return done;
    }

    double cpu_before = 0; // the queue manager's CPU when the measured pass began
    const PacedInjection& fresh() const { return *fresh_; }

  private:
    const compat::Instance& inst_;
    QmgrProbe probe_;
    std::uint64_t backlog_;
    std::unique_ptr<PacedInjection> fresh_;
    bool measuring_ = false;
    double next_look_ = 0;
};

class DeadBacklog : public Workload {
  public:
    explicit DeadBacklog(const Session& s)
        : session_(s), backlog_(scaled(100000, s.scale, dead_destinations)),
          fresh_(scaled(5000, s.scale, 10)) {}

    std::string name() const override { return "dead-backlog"; }
    std::string describe() const override {
        return with_commas(backlog_) + " one-recipient messages in deferred for " +
               std::to_string(dead_destinations) +
               " dead destinations (deferred once by the "
               "queue manager itself, then all due again) while " +
               with_commas(fresh_) + " fresh ones arrive for a live smtp-sink, " +
               std::to_string(static_cast<int>(fresh_per_second)) +
               " per second; cqmgr with cqmgr_dead_backlog = yes";
    }
    std::uint64_t recipients() const override { return fresh_; }
    int timeout() const override { return 600 + static_cast<int>(backlog_ / 50); }
    bool deferrals_expected() const override { return true; }
    std::uint64_t deferred_at_end() const override { return backlog_; }

    // The backlog as incoming files of a stock instance without a queue
    // manager, an equal share for each dead destination.
    void prepare() override {
        TemplateSpec t;
        t.label = name();
        t.qmgr_enabled = false;
        t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
        std::uint64_t n = backlog_;
        t.inject = [n](const compat::Instance& inst, std::uint16_t port) {
            for (int k = 0; k < dead_destinations; ++k) {
                std::uint64_t share =
                    n / dead_destinations + (k < static_cast<int>(n % dead_destinations));
                compat::run_command(smtp_source(inst, port, share, 20, "bob@" + dead_domain(k),
                                                "inject-" + std::to_string(k)),
                                    std::chrono::minutes(30));
            }
        };
        t.ready = {{"incoming", backlog_}};
        t.queues = {"incoming"};
        t.timeout = 600 + static_cast<int>(backlog_ / 20);
        template_ = std::make_unique<QueueTemplate>(t, session_.verbose);
    }
    std::vector<compat::SinkSpec> sinks() const override { return {sink_spec("live")}; }
    MainCf main_cf(const RunContext& run) const override {
        std::string map =
            "inline:{ live.example=smtp:[127.0.0.1]:" + std::to_string(run.sink_ports[0]);
        for (int k = 0; k < dead_destinations; ++k)
            map += ", " + dead_domain(k) + "=smtp:[127.0.0.1]:" + std::to_string(k + 1);
        MainCf cf = {{"transport_maps", map + " }"},
                     // Dead for the whole run once found dead, and no
                     // file due again by itself.
                     {"minimal_backoff_time", "3600s"},
                     {"maximal_backoff_time", "3600s"}};
        if (run.kind == compat::QmgrKind::Cqmgr) cf.emplace_back("cqmgr_dead_backlog", "yes");
        return cf;
    }
    // The template's incoming files, in deferred and due now.
    void populate(const RunContext& run) const override {
        copy_incoming_to_deferred(*template_, run.inst);
        backdate_files(run.inst.queue_dir() + "/deferred", 60);
    }
    bool live_injection() const override { return true; }
    std::unique_ptr<Injection> injection(const RunContext& run) const override {
        auto fresh = std::make_unique<PacedInjection>(
            run.smtpd_port, [](compat::SmtpClient&) {}, fresh_, 1.0 / fresh_per_second,
            one_recipient("news@bench.example", "fresh", "live.example"));
        return std::make_unique<BacklogInjection>(run.inst, backlog_, std::move(fresh));
    }
    std::string tag() const override { return "fresh"; }
    std::vector<MetricDef> extra_metrics() const override {
        return {
            {"fresh_median", "fresh messages: median delay (s)", 2},
            {"fresh_p99", "fresh messages: p99 delay (s)", 2},
            {"fresh_e2e_median", "fresh messages: median, due for submission to delivered (s)", 2},
            {"fresh_e2e_p99", "fresh messages: p99, due for submission to delivered (s)", 2},
            {"pass_cpu", "queue-manager CPU over the measured pass (s)", 2}};
    }
    void add_metrics(const DeliveryWatch& w, const Injection* inj, Metrics& m) const override {
        const auto& d = w.tagged_delays();
        m["fresh_median"] = median(d);
        m["fresh_p99"] = percentile(d, 99);
        if (const auto* b = dynamic_cast<const BacklogInjection*>(inj)) {
            m["pass_cpu"] = m["cpu"] - b->cpu_before;
            auto e2e = submission_to_delivery(b->fresh(), w, "fresh");
            m["fresh_e2e_median"] = median(e2e);
            m["fresh_e2e_p99"] = percentile(e2e, 99);
        }
    }

  private:
    Session session_;
    std::uint64_t backlog_;
    std::uint64_t fresh_;
    std::unique_ptr<QueueTemplate> template_;
};

} // namespace

// See the comment at the top of this file.
std::unique_ptr<Workload> make_dead_backlog(const Session& session) {
    return std::make_unique<DeadBacklog>(session);
}

} // namespace bench
