#include "runner.hpp"

#include "actions.hpp"
#include "error.hpp"
#include "flow_pipe.hpp"
#include "inject.hpp"
#include "maillog.hpp"
#include "net.hpp"
#include "peers.hpp"
#include "process.hpp"
#include "sanitizer.hpp"
#include "signals.hpp"
#include "sink.hpp"

#include <csignal>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

namespace compat {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds elapsed since t0.
double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// What the wait loop watches; the outcome is "reached" when this stops changing.
struct Snapshot {
    std::size_t log_bytes = 0;
    QueueCounts queue;
    bool operator==(const Snapshot&) const = default;
};

// Running counters from the maillog while waiting.
struct Progress {
    std::map<std::string, int> statuses;
    std::vector<std::string> problems;
    std::string startup_failure; // first "bad command startup" line, if any
};

// Updates the counters from newly appended maillog lines.
void account(Progress& p, const std::vector<std::string>& lines, const ExpectedKills& killed) {
    for (const auto& raw : lines) {
        auto l = parse_log_line(raw);
        if (!l) continue;
        if (!l->queue_id.empty())
            if (auto d = parse_delivery(l->text)) p.statuses[d->status]++;
        if ((l->service == "qmgr" || l->service == "cqmgr") && l->text.rfind("from=<", 0) == 0 &&
            l->text.find("status=expired") != std::string::npos)
            p.statuses["expired"]++;
        if (is_problem_line(l->program, l->text) && !is_expected_problem(*l, killed)) {
            p.problems.push_back(raw);
            if (p.startup_failure.empty() && is_startup_failure(raw, killed))
                p.startup_failure = raw;
        }
    }
}

// Lists what is still missing for the outcome, or "" when everything is there.
std::string missing(const Expect& e, const Progress& p, const QueueCounts& q) {
    std::string out;
    auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
    auto have = [&p](const char* s) { return p.statuses.count(s) ? p.statuses.at(s) : 0; };
    auto need = [&](const char* what, const std::optional<int>& want) {
        if (want && have(what) < *want)
            add(std::string(what) + "=" + std::to_string(*want) + " (found " +
                std::to_string(have(what)) + ")");
    };
    need("sent", e.sent);
    need("deferred", e.deferred);
    need("bounced", e.bounced);
    need("expired", e.expired);
    for (const char* d : {"incoming", "active", "maildrop"})
        if (q.at(d) != 0)
            add(std::string(d) + " empty (found " + std::to_string(q.at(d)) + " files)");
    return out;
}

// Polls maillog and queue every 100 ms until the expected counts are reached,
// incoming/active/maildrop are empty, and nothing has changed for `settle`
// seconds. Returns the time (since t0) at which the final state first appeared,
// or throws Error on timeout or when the instance broke.
double wait_for_outcome(const Scenario& sc, Instance& inst, Clock::time_point t0, bool verbose,
                        const ExpectedKills& killed) {
    MaillogTail tail(inst.maillog_path());
    Progress progress;
    auto deadline = t0 + std::chrono::seconds(sc.timeout);
    Snapshot last;
    bool have_last = false;
    Clock::time_point stable_since = Clock::now();
    auto next_report = Clock::now() + std::chrono::seconds(1);
    for (;;) {
        check_interrupted();
        account(progress, tail.read_new_lines(), killed);
        Snapshot now{tail.offset(), inst.queue_counts()};
        auto tnow = Clock::now();
        if (!have_last || !(now == last)) {
            last = now;
            have_last = true;
            stable_since = tnow;
        }
        std::string want = missing(sc.expect, progress, now.queue);
        if (want.empty() && tnow - stable_since >= std::chrono::duration<double>(sc.settle))
            return std::chrono::duration<double>(stable_since - t0).count();
        if (!progress.startup_failure.empty())
            throw Error("a Postfix service failed at startup (master throttles it), so the outcome "
                        "cannot be reached: " +
                        progress.startup_failure);
        if (!inst.master_alive())
            throw Error("expected master (pid " + std::to_string(inst.master_pid()) +
                        ") to keep running, found it gone; maillog tail:\n" + inst.maillog_tail());
        if (tnow >= deadline) {
            if (want.empty()) {
                std::ostringstream o;
                o << "no change for " << sc.settle << " s (the maillog or queue kept changing)";
                want = o.str();
            }
            throw Error("timed out after " + std::to_string(sc.timeout) +
                        " s waiting for: " + want);
        }
        if (verbose && tnow >= next_report) {
            next_report = tnow + std::chrono::seconds(1);
            std::cout << "  t=" << std::fixed << std::setprecision(1) << seconds_since(t0) << "s";
            for (const auto& [k, v] : progress.statuses)
                std::cout << ' ' << k << '=' << v;
            for (const auto& [k, v] : now.queue)
                std::cout << ' ' << k << ':' << v;
            std::cout << "\n" << std::flush;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// The scenario's cleanup command, run once: at teardown, or when the run
// is left early (an interruption).
struct Cleanup {
    const Scenario& sc;
    const Vars& vars;
    std::string conf_dir, log;
    bool done = false;

    void run() noexcept {
        if (done || sc.cleanup.empty()) return;
        done = true;
        try {
            SpawnOptions o;
            for (const auto& arg : sc.cleanup)
                o.argv.push_back(vars.expand(arg, "cleanup"));
            o.argv[0] = find_program(o.argv[0]);
            o.env.push_back("MAIL_CONFIG=" + conf_dir);
            o.output_path = log;
            run_command(o, std::chrono::seconds(10));
        } catch (const std::exception& e) {
            std::cerr << "compat-run: warning: cleanup: " << e.what() << "\n";
        }
    }
    ~Cleanup() { run(); }
};

// The part of a run that owns processes; everything is torn down on return or throw.
void run_instance(const Scenario& sc, QmgrKind kind, const RunOptions& opts, RunResult& res) {
    const std::string& dir = res.dir->path();
    auto ports = allocate_ports(1 + sc.sinks.size() + sc.ports.size());
    Vars vars;
    vars.set("dir", dir);
    vars.set("smtpd", std::to_string(ports[0]));
    vars.set("conf", dir + "/conf");
    vars.set("queue", dir + "/queue");
    vars.set("fake_agent", dir + "/libexec/compat-fake-agent");
    vars.set("cqmgrctl", opts.cqmgrctl_path.empty() ? "false" : opts.cqmgrctl_path);
    vars.set("scripts", COMPAT_SCRIPTS_DIR);
    vars.set("maillog", dir + "/maillog");
    for (size_t i = 0; i < sc.sinks.size(); ++i) {
        vars.set("sink." + sc.sinks[i].name, std::to_string(ports[i + 1]));
        vars.set("sinkdir." + sc.sinks[i].name, dir + "/sinks/" + sc.sinks[i].name);
    }
    for (size_t i = 0; i < sc.ports.size(); ++i)
        vars.set("port." + sc.ports[i], std::to_string(ports[1 + sc.sinks.size() + i]));

    InstanceConfig cfg;
    cfg.qmgr = kind;
    cfg.cqmgr_path = opts.cqmgr_path;
    cfg.fake_agent_path = opts.fake_agent_path;
    cfg.sanitizer_reports = opts.sanitized && kind == QmgrKind::Cqmgr;
    cfg.smtpd_port = ports[0];
    for (const auto& [k, v] : sc.main_cf)
        cfg.main_cf.emplace_back(k, vars.expand(v, "main_cf." + k));
    if (kind == QmgrKind::Cqmgr)
        for (const auto& kv : opts.cqmgr_main_cf)
            cfg.main_cf.push_back(kv);
    for (const auto& line : sc.master_cf)
        cfg.master_cf.push_back(vars.expand(line, "master_cf"));
    // Safety net: master exits by itself if this harness is killed outright.
    cfg.master_exit_after = sc.timeout + 60;
    cfg.qmgr_service_type = sc.qmgr_service_type;
    cfg.qmgr_args = sc.qmgr_args;
    cfg.chroot = sc.chroot;
    cfg.queue_fs_mib = sc.queue_fs.size_mib;

    UserIds postfix = lookup_user("postfix");
    std::vector<std::unique_ptr<Sink>> sinks; // declared before the instance: torn down after it
    if (!sc.sinks.empty()) make_dir(dir + "/sinks", 0755, 0, 0);
    for (size_t i = 0; i < sc.sinks.size(); ++i) {
        const auto& spec = sc.sinks[i];
        sinks.push_back(std::make_unique<Sink>(spec, ports[i + 1],
                                               dir + "/sink-" + spec.name + ".log",
                                               dir + "/sinks/" + spec.name, postfix));
        std::vector<std::string> args;
        for (const auto& a : spec.args)
            args.push_back(vars.expand(a, "sink." + spec.name + ".args"));
        sinks.back()->configure(args);
        if (spec.start) sinks.back()->start();
        if (opts.verbose)
            std::cout << "  sink " << spec.name << (spec.start ? " listening" : " (down) reserved")
                      << " on 127.0.0.1:" << ports[i + 1] << "\n";
    }
    std::vector<std::uint16_t> sink_ports(ports.begin() + 1,
                                          ports.begin() + 1 + static_cast<long>(sc.sinks.size()));
    ConnectionSampler sampler(sink_ports); // stopped before the sinks (declared after them)

    Instance inst(dir);
    inst.create(cfg);
    inst.start();
    // Declared after the run's own instance: run before it stops.
    Cleanup cleanup{sc, vars, inst.conf_dir(), dir + "/cleanup.log"};
    // Declared after the run's own instance: stopped before it.
    std::unique_ptr<Peers> peers;
    if (sc.peers.count > 0) {
        peers = std::make_unique<Peers>(sc.peers, cfg, dir);
        peers->start();
    }
    // Runs injection `i` into the instance it names.
    auto inject = [&](size_t i, Clock::time_point deadline) {
        const InjectSpec& in = sc.injects[i];
        if (in.peer > 0)
            run_injection(in, i, vars, peers->instance(in.peer), peers->smtpd_port(in.peer),
                          deadline, opts.verbose);
        else
            run_injection(in, i, vars, inst, ports[0], deadline, opts.verbose);
    };
    if (opts.verbose)
        std::cout << "  master pid " << inst.master_pid() << ", smtpd on 127.0.0.1:" << ports[0]
                  << "\n"
                  << std::flush;

    std::vector<std::string> sink_names;
    for (const auto& s : sc.sinks)
        sink_names.push_back(s.name);

    auto t0 = Clock::now();
    const double t0_epoch =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto deadline = t0 + std::chrono::seconds(sc.timeout);
    ExpectedKills killed;
    for (const auto& re : sc.allowed_problems)
        killed.allowed.emplace_back(vars.expand(re, "allowed_problems"));
    ActionContext actx{inst, vars, {}, deadline, opts.verbose, killed};
    std::vector<std::pair<const ReportSpec*, std::string>> report_output;
    for (auto& s : sinks)
        actx.sinks[s->name()] = s.get();
    try {
        // Injections and actions in file order: action k runs once the first
        // after_inject injections are done.
        size_t next = 0;
        for (size_t k = 0; k < sc.actions.size(); ++k) {
            const auto& a = sc.actions[k];
            for (; next < static_cast<size_t>(a.after_inject); ++next)
                inject(next, deadline);
            if (!a.qmgr.empty() && a.qmgr != qmgr_kind_name(kind)) continue;
            try {
                run_action(a, k, actx);
            } catch (const Interrupted&) {
                throw;
            } catch (const Error& e) {
                throw Error(a.where + " (" + (a.kind.empty() ? "wait_for" : a.kind) +
                            "): " + e.what());
            }
        }
        for (; next < sc.injects.size(); ++next)
            inject(next, deadline);
        res.outcome.injection_seconds = seconds_since(t0);
        res.outcome.outcome_seconds = wait_for_outcome(sc, inst, t0, opts.verbose, killed);
        if (peers) peers->wait(deadline);
        for (const auto& rep : sc.reports)
            if (rep.qmgr.empty() || rep.qmgr == qmgr_kind_name(kind))
                report_output.emplace_back(&rep, run_report(rep, actx));
    } catch (const Interrupted&) {
        throw;
    } catch (const Error& e) {
        if (res.outcome.injection_seconds == 0) res.outcome.injection_seconds = seconds_since(t0);
        res.failures.push_back(e.what());
    }
    // Collect whatever state there is, also after a timeout (for the summary and the comparison).
    double inj = res.outcome.injection_seconds, reached = res.outcome.outcome_seconds;
    std::string log;
    read_file_if_exists(inst.maillog_path(), log);
    std::vector<std::string> lines = split_lines(log);
    res.outcome = collect_outcome(lines, vars, sink_names, inst.queue_counts(), killed);
    res.outcome.injection_seconds = inj;
    res.outcome.outcome_seconds = reached;
    res.outcome.milestones = milestone_times(sc.milestones, lines, vars, t0_epoch);
    Normalizer norm = maillog_normalizer(lines, vars);
    for (const auto& [rep, text] : report_output) {
        if (rep->compare) res.outcome.reports[rep->name] = normalized_lines(text, norm);
        if (rep->show) res.outcome.shown_reports.emplace_back(rep->name, text);
    }
    res.outcome.backoffs = deferred_backoffs(inst.queue_dir() + "/deferred");
    res.outcome.corrupt_files = file_names_below(inst.queue_dir() + "/corrupt");
    res.outcome.flush_logs = flush_log_ids(inst.queue_dir() + "/flush");
    for (const auto& q : reported_queues())
        if (q != "maildrop")
            res.outcome.queue_paths[q] = queue_file_paths(inst.queue_dir() + "/" + q);
    if (inst.master_alive()) res.outcome.flow_tokens = flow_tokens(inst.master_pid());

    // A process the scenario stopped (SIGSTOP) would ignore master's SIGTERM.
    if (inst.master_alive())
        for (const auto& p : children_of(inst.master_pid()))
            if (killed.pids.count(p.pid)) kill(p.pid, SIGCONT);
    if (peers) {
        for (const auto& line : peers->summary())
            res.outcome.peer_summary.push_back(line);
        peers->stop();
        for (auto& f : peers->failures())
            res.failures.push_back(std::move(f));
    }
    cleanup.run();
    inst.stop(); // after this, cqmgr has exited and reported its leaks, if any
    if (cfg.sanitizer_reports) {
        // First: a sanitizer finding explains whatever else went wrong.
        auto reports = sanitizer_reports(inst.sanitizer_dir());
        res.failures.insert(res.failures.begin(), reports.begin(), reports.end());
    }
    sampler.stop();
    for (auto& s : sinks)
        s->stop();
    for (size_t i = 0; i < sinks.size(); ++i) {
        res.outcome.peak_connections[sinks[i]->name()] = sampler.peak(i);
        if (const SessionCounter* c = sinks[i]->sessions()) {
            auto& sessions = res.outcome.sessions[sinks[i]->name()];
            sessions = {c->peak(), c->sessions(), c->mixed_wakeups(), c->sender_peaks()};
            // Senders counted together ("SINK:a.example+b.example").
            for (const auto& [key, rg] : sc.expect.sender_session_peak) {
                (void)rg;
                std::string prefix = sinks[i]->name() + ":";
                if (!key.starts_with(prefix) || key.find('+') == std::string::npos) continue;
                std::vector<std::string> senders;
                std::string rest = key.substr(prefix.size());
                for (size_t at = 0;;) {
                    size_t plus = rest.find('+', at);
                    senders.push_back(rest.substr(at, plus - at));
                    if (plus == std::string::npos) break;
                    at = plus + 1;
                }
                sessions.senders[rest] = c->peak_of(senders);
            }
        }
        if (sinks[i]->dumps()) {
            res.outcome.transactions[sinks[i]->name()] = sink_transactions(sinks[i]->dump_dir());
            res.outcome.transaction_times[sinks[i]->name()] =
                sink_transaction_times(sinks[i]->dump_dir());
        }
    }

    for (auto& f : check_expectations(sc.expect, res.outcome, vars))
        res.failures.push_back(std::move(f));
}

} // namespace

// Creates the working directory and converts set-up errors into failures.
RunResult run_once(const Scenario& sc, QmgrKind kind, const RunOptions& opts) {
    RunResult res;
    res.kind = kind;
    res.dir = std::make_unique<WorkDir>("/tmp/cqmgr-compat-");
    try {
        run_instance(sc, kind, opts, res);
    } catch (const Interrupted&) {
        res.dir->remove_on_exit(!opts.keep_on_interrupt);
        if (opts.keep_on_interrupt)
            std::cerr << "compat-run: interrupted; instance dir kept: " << res.dir->path() << "\n";
        throw;
    } catch (const Error& e) {
        res.failures.push_back(std::string("set-up: ") + e.what());
    }
    return res;
}

} // namespace compat
