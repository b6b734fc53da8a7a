#include "dead_restart.hpp"

#include "clock.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "maillog.hpp"
#include "metrics.hpp"
#include "net.hpp"
#include "process.hpp"
#include "qmgr_probe.hpp"
#include "side_by_side.hpp"
#include "signals.hpp"
#include "smtp_client.hpp"

#include <csignal>
#include <iostream>
#include <regex>
#include <sstream>

namespace bench {
namespace {

constexpr int messages_per_step = 5;

// The maillog's lines as they are appended, counted from a mark.
class LineCounter {
  public:
    explicit LineCounter(const std::string& maillog) : tail_(maillog) {}
    // Reads what was appended.
    void poll() {
        for (auto& l : tail_.read_new_lines())
            lines_.push_back(std::move(l));
    }
    // From here on (a phase of the run begins).
    void mark() {
        poll();
        mark_ = lines_.size();
    }
    // Lines since the mark that match `re`.
    int count(const std::regex& re) const {
        int n = 0;
        for (size_t i = mark_; i < lines_.size(); ++i)
            if (std::regex_search(lines_[i], re)) ++n;
        return n;
    }

  private:
    compat::MaillogTail tail_;
    std::vector<std::string> lines_;
    size_t mark_ = 0;
};

// One run's figures.
struct DeadRestart {
    int attempts_before = 0;       // until the destination was dead
    int attempts_after_reload = 0; // after postfix reload, for new mail
    int attempts_after_kill = 0;   // after kill -9, for new mail
    double deferral_seconds = 0;   // from injection to the last new deferral, after kill -9
};

// `n` one-recipient messages to bob@c.example over one SMTP session.
void inject(std::uint16_t port, int n) {
    compat::SmtpClient c(port, std::chrono::seconds(60));
    c.ehlo("bench.example");
    for (int i = 0; i < n; ++i)
        c.send_mail("alice@example.org", {"bob@c.example"},
                    "From: <alice@example.org>\nTo: <bob@c.example>\nSubject: dead\n\ndead\n");
    c.quit();
}

// Polls the maillog until `count` lines matching `re` have been seen since
// the mark.
void await_lines(LineCounter& log, const std::regex& re, int count, double timeout,
                 const std::string& what, const compat::Instance& inst) {
    double deadline = boot_seconds() + timeout;
    for (;;) {
        log.poll();
        int seen = log.count(re);
        if (seen >= count) return;
        compat::check_interrupted();
        if (boot_seconds() > deadline)
            throw compat::Error("expected " + what + " within " + std::to_string(int(timeout)) +
                                " s, found " + std::to_string(seen) + " of " +
                                std::to_string(count) + "; maillog tail:\n" + inst.maillog_tail());
        pause(0.05);
    }
}

// postfix -c CONF reload.
void reload(const compat::Instance& inst) {
    compat::SpawnOptions o;
    o.argv = {"/usr/sbin/postfix", "-c", inst.conf_dir(), "reload"};
    compat::run_command(o, std::chrono::seconds(60));
}

// The whole run against one queue manager.
DeadRestart measure(compat::QmgrKind kind, const RunOptions& opts, const std::string& dir) {
    auto ports = compat::allocate_ports(2); // smtpd, and the dead destination's
    compat::Instance inst(dir);
    compat::InstanceConfig cfg;
    cfg.qmgr = kind;
    cfg.cqmgr_path = opts.cqmgr_path;
    cfg.smtpd_port = ports[0];
    cfg.main_cf = {{"transport_maps",
                    "inline:{ c.example=smtp:[127.0.0.1]:" + std::to_string(ports[1]) + " }"},
                   {"minimal_backoff_time", "60s"},
                   {"maximal_backoff_time", "120s"},
                   {"in_flow_delay", "0"}};
    cfg.master_exit_after = 600;
    inst.create(cfg);
    inst.start();
    QmgrProbe probe(inst);
    probe.await_start(std::chrono::seconds(30));

    // The smtp client's own line for each failed connection (the deferral
    // lines quote the same text as their reason).
    const std::regex refused("\\]: connect to 127\\.0\\.0\\.1\\[127\\.0\\.0\\.1\\]:" +
                             std::to_string(ports[1]) + ": Connection refused");
    const std::regex deferred("to=<bob@c\\.example>.*status=deferred");
    const std::regex reloaded("postfix/master\\[\\d+\\]: reload -- version");
    LineCounter log(inst.maillog_path());
    DeadRestart r;

    // The destination dies on the first messages.
    log.mark();
    inject(ports[0], messages_per_step);
    await_lines(log, deferred, messages_per_step, 60, "the first deferrals", inst);
    r.attempts_before = log.count(refused);
    pause(2.5); // cqmgr's store commits at most once a second

    // postfix reload, then new mail.
    log.mark();
    reload(inst);
    await_lines(log, reloaded, 1, 30, "master's reload line", inst);
    inject(ports[0], messages_per_step);
    await_lines(log, deferred, messages_per_step, 60, "the deferrals after postfix reload", inst);
    r.attempts_after_reload = log.count(refused);
    pause(2.5);

    // kill -9 of the queue manager, then new mail (which makes master start
    // a new one).
    probe.await_start(std::chrono::seconds(30));
    ::kill(probe.usage().pid, SIGKILL);
    pause(0.5);
    log.mark();
    double t0 = boot_seconds();
    inject(ports[0], messages_per_step);
    await_lines(log, deferred, messages_per_step, 60, "the deferrals after kill -9", inst);
    r.deferral_seconds = boot_seconds() - t0;
    r.attempts_after_kill = log.count(refused);
    inst.stop();
    return r;
}

} // namespace

// Alternates stock and cqmgr; a table of medians.
int run_dead_restart(const Session&, const RunOptions& opts, int pairs) {
    std::cout << "dead-restart: a destination refusing connections dies on " << messages_per_step
              << " messages; then postfix reload and " << messages_per_step
              << " new messages, then kill -9 of the queue manager and " << messages_per_step
              << " more; minimal_backoff_time 60 s\n"
              << std::flush;
    int failed = 0;
    auto runs = run_side_by_side<DeadRestart>(
        pairs, opts,
        [&](compat::QmgrKind kind, const std::string& dir) { return measure(kind, opts, dir); },
        [](const DeadRestart& r) {
            std::ostringstream o;
            o << "attempts before=" << r.attempts_before
              << ", after reload=" << r.attempts_after_reload
              << ", after kill -9=" << r.attempts_after_kill << ", deferral after kill "
              << r.deferral_seconds << " s";
            return o.str();
        },
        failed);
    SideTable<DeadRestart> table(runs, "stock qmgr", "cqmgr");
    const std::string n = std::to_string(messages_per_step);
    table.row(
        "attempts while it died (" + n + " messages)",
        [](const DeadRestart& r) { return r.attempts_before; }, 0);
    table.row(
        "attempts after postfix reload (" + n + " new messages)",
        [](const DeadRestart& r) { return r.attempts_after_reload; }, 0);
    table.row(
        "attempts after kill -9 (" + n + " new messages)",
        [](const DeadRestart& r) { return r.attempts_after_kill; }, 0);
    table.row(
        "injection to last deferral after kill -9 (s)",
        [](const DeadRestart& r) { return r.deferral_seconds; }, 2);
    std::ostringstream t;
    t << "\n### dead-restart\n\nMedians of " << runs["stock"].size() << " stock and "
      << runs["cqmgr"].size() << " cqmgr runs, alternated; connection attempts to the dead "
      << "destination counted from the maillog (the smtp client's \"connect to ...: Connection "
      << "refused\" lines).\n\n"
      << table.str();
    std::cout << t.str() << std::flush;
    return failed ? 1 : 0;
}

} // namespace bench
