#include "run.hpp"

#include "attach.hpp"
#include "clock.hpp"
#include "delivery_watch.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "net.hpp"
#include "poller.hpp"
#include "qmgr_probe.hpp"
#include "signals.hpp"
#include "sink.hpp"

#include <algorithm>
#include <iostream>
#include <memory>

namespace bench {
namespace {

// True once no message is left in maildrop, incoming or active, and
// deferred holds exactly `deferred` (what the workload leaves there).
bool queue_drained(const compat::Instance& inst, std::uint64_t deferred) {
    for (const char* q : {"maildrop", "incoming", "active"})
        if (compat::count_files(inst.queue_dir() + "/" + q) != 0) return false;
    return compat::count_files(inst.queue_dir() + "/deferred") == deferred;
}

// Throws if the maillog shows a fatal error or a recipient that was not
// delivered (deferrals aside, if the workload expects them).
void check_log(const DeliveryWatch& watch, bool deferrals_expected) {
    if (!watch.first_fatal().empty())
        throw compat::Error("expected no fatal or panic lines in the maillog, found: " +
                            watch.first_fatal());
    if (deferrals_expected) {
        // Deferred lines are part of the workload; name the first line
        // that is neither sent nor deferred.
        if (watch.not_sent() > watch.deferred())
            throw compat::Error("expected every recipient to be delivered or deferred "
                                "(status=sent or status=deferred), found " +
                                std::to_string(watch.not_sent() - watch.deferred()) +
                                " with another status, the first: " + watch.first_neither());
        return;
    }
    if (watch.not_sent() > 0)
        throw compat::Error("expected every recipient to be delivered (status=sent), found " +
                            std::to_string(watch.not_sent()) +
                            " that were not, the first: " + watch.first_not_sent());
}

// Everything that owns processes; torn down on return or throw.
void measure(const Workload& w, compat::QmgrKind kind, const RunOptions& opts,
             const std::string& dir, Metrics& m) {
    auto specs = w.sinks();
    auto ports = compat::allocate_ports(2 + specs.size()); // the last: metrics
    compat::UserIds postfix = compat::lookup_user("postfix");
    compat::make_dir(dir + "/sinks", 0755, 0, 0);
    std::vector<std::unique_ptr<compat::Sink>> sinks; // outlive the instance
    std::unique_ptr<RunFixture> fixture;              // so does the fixture
    for (size_t i = 0; i < specs.size(); ++i) {
        const auto& s = specs[i];
        sinks.push_back(std::make_unique<compat::Sink>(
            s, ports[i + 1], dir + "/sink-" + s.name + ".log", dir + "/sinks/" + s.name, postfix));
        if (s.start) sinks.back()->start(s.args);
    }
    compat::Instance inst(dir);
    RunContext ctx{inst, kind, ports[0], {ports.begin() + 1, ports.end() - 1}, {}, opts.verbose};
    for (auto& s : sinks)
        ctx.sinks.push_back(s.get());
    compat::InstanceConfig cfg;
    cfg.qmgr = kind;
    cfg.cqmgr_path = opts.cqmgr_path;
    cfg.smtpd_port = ports[0];
    cfg.main_cf = w.main_cf(ctx);
    if (kind == compat::QmgrKind::Cqmgr)
        for (const auto& kv : opts.cqmgr_main_cf)
            cfg.main_cf.push_back(kv);
    cfg.master_cf = w.master_cf(ctx);
    cfg.queue_tmpfs = w.queue_on_tmpfs();
    if (opts.polled)
        cfg.main_cf.emplace_back("cqmgr_metrics_listen",
                                 "127.0.0.1:" + std::to_string(ports.back()));
    cfg.master_exit_after = w.timeout() + 120;
    inst.create(cfg);
    w.populate(ctx);
    fixture = w.fixture(ctx);
    inst.start();

    QmgrProbe probe(inst);
    probe.await_start(std::chrono::seconds(30));
    std::unique_ptr<AttachedTool> tool;
    double started = probe.usage().started;
    if (!opts.attach.empty()) {
        tool = std::make_unique<AttachedTool>(opts.attach, probe.usage().pid, opts.attach_out, 1);
        started = boot_seconds(); // the time it was stopped does not count
    }
    std::unique_ptr<compat::ConnectionSampler> connections;
    if (w.watches_peaks())
        connections = std::make_unique<compat::ConnectionSampler>(ctx.sink_ports);
    std::uint64_t active_peak = 0;
    std::unique_ptr<Poller> poller;
    if (opts.polled)
        poller = std::make_unique<Poller>(inst, opts.cqmgrctl_path, ports.back(),
                                          dir + "/cqmgrctl-top.log", opts.scrape_every);
    DeliveryWatch watch(inst.maillog_path(), w.tag());
    auto inj = w.injection(ctx);
    if ((inj != nullptr) != w.live_injection())
        throw compat::Error("workload " + w.name() + ": expected injection() to match " +
                            "live_injection(), found a mismatch");
    bool injected = inj == nullptr;
    double deadline = boot_seconds() + w.timeout();
    double next_sample = 0, next_report = boot_seconds() + 10, next_drain_check = 0;
    for (;;) {
        compat::check_interrupted();
        if (!injected) injected = inj->step();
        if (inj && inj->qmgr_restarted) {
            inj->qmgr_restarted = false;
            probe.await_start(std::chrono::seconds(30));
        }
        if (poller) poller->step();
        watch.poll();
        check_log(watch, w.deferrals_expected());
        double now = boot_seconds();
        if (now >= next_sample) {
            probe.sample();
            if (w.watches_peaks())
                active_peak =
                    std::max(active_peak, compat::count_files(inst.queue_dir() + "/active"));
            next_sample = now + 0.1;
        }
        if (injected && w.measured(watch)) break;
        // A large deferred/ takes a while to count: twice a second is enough.
        if (injected && watch.sent() >= w.recipients() && now >= next_drain_check) {
            if (queue_drained(inst, w.deferred_at_end())) break;
            next_drain_check = now + 0.5;
        }
        if (now >= deadline)
            throw compat::Error("expected " + std::to_string(w.recipients()) +
                                " recipients delivered within " + std::to_string(w.timeout()) +
                                " s, found " + std::to_string(watch.sent()) +
                                (injected ? "" : " (injection still running)"));
        if (!inst.master_alive())
            throw compat::Error("expected master to keep running, found it gone; maillog tail:\n" +
                                inst.maillog_tail());
        if (opts.verbose && now >= next_report) {
            next_report = now + 10;
            std::cout << "    " << watch.sent() << " of " << w.recipients() << " delivered\n"
                      << std::flush;
        }
        pause(0.01);
    }
    probe.sample();
    if (tool) tool->stop();
    if (connections) {
        connections->stop();
        int peak = 0;
        for (size_t i = 0; i < ctx.sink_ports.size(); ++i)
            peak = std::max(peak, connections->peak(i));
        m["active_peak"] = static_cast<double>(active_peak);
        m["connections_peak"] = peak;
    }
    if (poller) {
        poller->stop();
        m["scrapes"] = poller->scrapes();
        if (poller->failed_scrapes() > 0) m["failed_scrapes"] = poller->failed_scrapes();
    }
    const QmgrUsage& u = probe.usage();
    double start = inj ? inj->started : started;
    double n = static_cast<double>(w.recipients());
    m["cpu"] = u.cpu_seconds;
    m["cpu_user"] = u.user_seconds;
    m["cpu_per_rcpt"] = u.cpu_seconds / n * 1e6;
    m["rss"] = static_cast<double>(u.peak_rss_kb);
    if (w.reports_delivery()) {
        m["drain"] = watch.last_sent_at() - start;
        m["rate"] = n / m["drain"];
        m["first"] = watch.first_sent_at() - start;
    }
    if (w.deferrals_expected()) {
        m["deferred"] = static_cast<double>(watch.deferred());
        m["deferred_pct"] =
            100.0 * static_cast<double>(watch.deferred()) /
            static_cast<double>(std::max<std::uint64_t>(watch.deferred() + watch.sent(), 1));
    }
    w.add_metrics(watch, inj.get(), m);
    if (fixture) fixture->add_metrics(start, m);
    inst.stop();
}

} // namespace

// A temporary directory per run, removed unless kept (--keep, or --keep-failed on failure).
RunResult run_workload(const Workload& w, compat::QmgrKind kind, const RunOptions& opts) {
    RunResult res;
    res.kind = kind;
    res.side = opts.polled ? "polled" : compat::qmgr_kind_name(kind);
    compat::WorkDir dir("/tmp/cqmgr-bench-");
    dir.remove_on_exit(true);
    try {
        measure(w, kind, opts, dir.path(), res.metrics);
        if (opts.keep) {
            dir.remove_on_exit(false);
            std::cout << "    kept " << dir.path() << "\n";
        }
    } catch (const compat::Interrupted&) {
        throw;
    } catch (const compat::Error& e) {
        res.metrics.clear();
        res.error = e.what();
        if (opts.keep_failed || opts.keep) {
            dir.remove_on_exit(false);
            res.error += " (instance kept in " + dir.path() + ")";
        }
    } catch (const std::exception& e) {
        res.metrics.clear();
        res.error = std::string("unexpected error: ") + e.what();
    }
    return res;
}

} // namespace bench
