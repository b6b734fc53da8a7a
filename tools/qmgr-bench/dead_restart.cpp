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
#include <functional>
#include <iostream>
#include <regex>
#include <sstream>
#include <tuple>
#include <vector>

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

// `messages` messages to DOMAIN over one SMTP session, each with `rcpts`
// recipients (bob1@DOMAIN, bob2@DOMAIN, ...).
void inject(std::uint16_t port, const std::string& domain, int messages, int rcpts) {
    compat::SmtpClient c(port, std::chrono::seconds(60));
    c.ehlo("bench.example");
    std::vector<std::string> to;
    for (int i = 1; i <= rcpts; ++i)
        to.push_back("bob" + std::to_string(i) + "@" + domain);
    for (int i = 0; i < messages; ++i)
        c.send_mail("alice@example.org", to,
                    "From: <alice@example.org>\nTo: <" + to[0] + ">\nSubject: dead\n\ndead\n");
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
    // smtpd, and the two dead destinations': c.example's (killed) and
    // d.example's (reloaded).
    auto ports = compat::allocate_ports(3);
    compat::Instance inst(dir);
    compat::InstanceConfig cfg;
    cfg.qmgr = kind;
    cfg.cqmgr_path = opts.cqmgr_path;
    cfg.smtpd_port = ports[0];
    cfg.main_cf = {
        {"transport_maps", "inline:{ c.example=smtp:[127.0.0.1]:" + std::to_string(ports[1]) +
                               ", d.example=smtp:[127.0.0.1]:" + std::to_string(ports[2]) + " }"},
        // Two recipients a delivery: 1 keeps a queue per recipient.
        {"smtp_destination_recipient_limit", "2"},
        {"minimal_backoff_time", "60s"},
        {"maximal_backoff_time", "120s"},
        {"in_flow_delay", "0"}};
    cfg.master_exit_after = 600;
    inst.create(cfg);
    inst.start();
    QmgrProbe probe(inst);
    probe.await_start(std::chrono::seconds(30));

    const std::regex reloaded("postfix/master\\[\\d+\\]: reload -- version");
    LineCounter log(inst.maillog_path());
    DeadRestart r;

    // One destination's death, a restart half a second later, and new mail
    // for it; returns the connection attempts to it while it died and after
    // the restart.
    auto die_and_restart = [&](const std::string& domain, std::uint16_t port,
                               const std::function<void()>& restart, const std::string& how) {
        // The smtp client's own line for each failed connection (the
        // deferral lines quote the same text as their reason).
        const std::regex refused("\\]: connect to 127\\.0\\.0\\.1\\[127\\.0\\.0\\.1\\]:" +
                                 std::to_string(port) + ": Connection refused");
        const std::regex deferred("to=<bob\\d+@" +
                                  std::regex_replace(domain, std::regex("\\."), "\\.") +
                                  ">.*status=deferred");
        // One message with two recipients per delivery: all its deliveries
        // are sent at once (initial_destination_concurrency 5), and the
        // queue, busy until the last fails, dies.  (Separate messages may
        // each find the queue gone after the one before failed, and then it
        // never dies.)
        log.mark();
        inject(ports[0], domain, 1, 2 * messages_per_step);
        await_lines(log, deferred, 2 * messages_per_step, 60, "the deferrals of " + domain, inst);
        int before = log.count(refused);
        // The agents log their deferrals before the queue manager reads
        // their replies: a moment for it to learn of the death.  That is
        // all: cqmgr commits a death to its store as it learns of it, well
        // within the second in which its other changes are batched.
        pause(0.5);
        restart();
        log.mark();
        double t0 = boot_seconds();
        inject(ports[0], domain, messages_per_step, 1);
        await_lines(log, deferred, messages_per_step, 60, "the deferrals after " + how, inst);
        return std::make_tuple(before, log.count(refused), boot_seconds() - t0);
    };

    // kill -9 of the queue manager; the new mail makes master start a new one.
    auto [before, after_kill, seconds] = die_and_restart(
        "c.example", ports[1],
        [&] {
            probe.await_start(std::chrono::seconds(30));
            ::kill(probe.usage().pid, SIGKILL);
            pause(0.5);
        },
        "kill -9");
    r.attempts_before = before;
    r.attempts_after_kill = after_kill;
    r.deferral_seconds = seconds;
    // postfix reload: the old queue manager exits when master closes its
    // status pipe.
    r.attempts_after_reload = std::get<1>(die_and_restart(
        "d.example", ports[2],
        [&] {
            reload(inst);
            await_lines(log, reloaded, 1, 30, "master's reload line", inst);
        },
        "postfix reload"));
    inst.stop();
    return r;
}

} // namespace

// Alternates stock and cqmgr; a table of medians.
int run_dead_restart(const Session&, const RunOptions& opts, int pairs) {
    std::cout << "dead-restart: a destination refusing connections dies on a message with "
              << 2 * messages_per_step << " recipients, 2 per delivery; half a second later "
              << "kill -9 of the queue manager and " << messages_per_step
              << " new messages for it; the same for a second destination "
              << "with postfix reload; minimal_backoff_time 60 s\n"
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
        "attempts while it died (1 message, " + n + " deliveries)",
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
