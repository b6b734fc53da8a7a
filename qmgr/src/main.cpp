// cqmgr: a drop-in queue manager for Postfix.  master(8) runs it from the
// `qmgr` line of master.cf, e.g.  qmgr unix n - n 300 1 cqmgr
//
// Start-up follows Postfix's trigger server, step by step: read main.cf
// (from MAIL_CONFIG or /etc/postfix) with the -o overrides, open logging,
// check the service's process limit, read every parameter (a value stock
// refuses stops us with stock's text), chdir to the queue directory, open
// what must be opened outside the jail, enter the jail (-c chroot, -u
// mail_owner), then serve triggers.  With -S the one trigger on standard
// input is served and the process exits, as stock does.
#include "control_surface.hpp"
#include "cqmgr/conf/command_line.hpp"
#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "jail.hpp"
#include "log.hpp"
#include "master_link.hpp"
#include "metrics_endpoint.hpp"
#include "priority_class.hpp"
#include "process_limits.hpp"
#include "queue_manager.hpp"
#include "self_check.hpp"
#include "state_open.hpp"
#include "table_watch.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <signal.h>
#include <unistd.h>
#include <utility>

using namespace cqmgr;

namespace {

// Watchdog: if one pass of the event loop takes longer than
// qmgr_daemon_timeout, the process is stuck; die so master starts a fresh one.
void watchdog_fired(int) {
    static const char msg[] = "cqmgr: fatal: watchdog timeout\n";
    ssize_t n = ::write(2, msg, sizeof msg - 1);
    (void)n;
    ::_exit(1);
}

// Re-arms the watchdog every third of its period while the loop is alive.
void watchdog_pet(asio::steady_timer& timer, int64_t period) {
    ::alarm(static_cast<unsigned>(period));
    timer.expires_after(std::chrono::seconds(std::max<int64_t>(period / 3, 1)));
    timer.async_wait([&timer, period](const error_code& ec) {
        if (!ec) watchdog_pet(timer, period);
    });
}

// The first label of a host name, as postlogd records show it.
std::string short_host(const std::string& host) {
    return host.substr(0, host.find('.'));
}

// Answers --version and --help, which master never passes; true when
// `arg` was one of them.
bool answer_info_option(const char* arg) {
    if (std::strcmp(arg, "--version") == 0) {
        std::printf("cqmgr %s\n", CQMGR_VERSION);
        return true;
    }
    if (std::strcmp(arg, "--help") == 0) {
        std::printf(
            "usage: cqmgr [-cdDlSuvVz] [-n service] [-o name=value] [-s count] [-t transport]\n"
            "       cqmgr check [-c config_dir]\n"
            "\n"
            "cqmgr is a queue manager for Postfix.  master(8) starts it from the qmgr line\n"
            "of master.cf, in place of qmgr(8):\n"
            "\n"
            "    qmgr      unix  n       -       n       300     1       cqmgr\n"
            "\n"
            "It reads main.cf from $MAIL_CONFIG (default /etc/postfix) and logs as\n"
            "postfix/qmgr.  It is not meant to be run by hand; see cqmgr(8).\n"
            "\n"
            "  check       report what in main.cf and master.cf would stop or hinder\n"
            "              cqmgr (exit status 1 on an error); -c names the\n"
            "              configuration directory\n"
            "  --version   print the version and exit\n"
            "  --help      print this text and exit\n");
        return true;
    }
    return false;
}

} // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    if (argc == 2 && answer_info_option(argv[1])) return 0;
    // master passes options first ("-n qmgr -t unix ..."), never a bare
    // word: "check" comes from someone who typed it.
    if (argc >= 2 && std::strcmp(argv[1], "check") == 0) return qmgr::run_self_check(argc, argv);

    // Logging comes first, with the default name, as in stock: what goes
    // wrong while main.cf is read is logged there.  -V adds standard error
    // only once main.cf is read, where stock's option loop turns it on.
    std::string err;
    auto cl = conf::parse_command_line(argc, argv, err);
    std::string process_name = cl ? cl->process_name : "cqmgr";
    log::Options lo;
    lo.tag = "postfix/" + process_name;
    log::init(lo);

    conf::MainCf cf([](const std::string& w) { log::warn(w); });
    // A configuration error stops us where it stops stock qmgr, with its
    // text, after the complaint stock logs just before it.
    auto config_fatal = [](const conf::ConfigError& e) {
        if (!e.warning().empty()) log::warn(e.warning());
        log::fatal(e.postfix_text());
    };
    conf::QmgrParams params;
    try {
        conf::register_defaults(cf);
        if (!cf.load_dir(cl ? conf::resolve_config_dir(*cl) : "/etc/postfix"))
            log::fatal(cf.error());
        if (!cl) {
            log::set_stderr(true); // someone typed it: tell them, not only the log
            log::fatal(err);
        }
        log::set_stderr(cl->log_to_stderr);
        for (auto& [name, value] : cl->overrides)
            cf.set(name, value);
        cf.set("process_name", cl->process_name);
        cf.set("service_name", cl->service_name);
        params = conf::QmgrParams::load(cf, [](const std::string& w) { log::warn(w); });

        // Logging again, under "<syslog_name>/<service>", i.e. postfix/qmgr.
        lo.tag = params.syslog_name + "/" + cl->service_name;
        lo.verbose = cl->verbose;
        lo.to_stderr = cl->log_to_stderr;
        lo.facility = params.syslog_facility;
        lo.utf8 = params.smtputf8_enable; // as stock, once its parameters are read
        if (!params.maillog_file.empty()) {
            const char* svc = std::getenv("POSTLOG_SERVICE");
            lo.postlog_path =
                svc && *svc ? svc
                            : params.queue_directory + "/public/" + params.postlog_service_name;
            const char* host = std::getenv("POSTLOG_HOSTNAME");
            lo.hostname = short_host(host && *host ? host : params.myhostname);
        }
        log::init(lo);
    } catch (const conf::ConfigError& e) {
        config_fatal(e);
    }
    // Like stock: a terminal on standard input means someone typed the
    // command, unless -S (one trigger from it) or -d (not a daemon).
    if (!cl->stdin_mode && !cl->debug && ::isatty(STDIN_FILENO))
        log::fatal("do not run this command by hand");
    if (auto why = conf::check_trigger_server(*cl)) log::fatal(*why);

    if (::chdir(params.queue_directory.c_str()) < 0)
        log::fatal("chdir(\"" + params.queue_directory + "\"): " + std::strerror(errno));
    // Before the jail: fast_flush_domains files and tables are opened now,
    // and the time zone is read while /etc is still reachable.
    bool parent_style = std::ranges::count(params.parent_domain_matches_subdomains,
                                           std::string("fast_flush_domains")) > 0;
    qmgr::FlushDomains flush_domains(params.fast_flush_domains, parent_style);
    qmgr::TableWatch tables(flush_domains.tables());
    ::tzset();
    // cqmgr_rate_limits and cqmgr_cluster_concurrency_limits: read now,
    // while their files are reachable.
    qmgr::ClusterLimits::Tables limit_tables;
    try {
        limit_tables = qmgr::ClusterLimits::open_tables(params);
    } catch (const conf::ConfigError& e) {
        config_fatal(e);
    }
    // Priority lanes: their tables, and each transport's process limit
    // from master.cf for the shares, both out of reach once chrooted.
    qmgr::PriorityTables priorities;
    if (params.lanes()) {
        try {
            priorities = qmgr::PriorityTables::open(params.cqmgr_priority_maps,
                                                    params.cqmgr_priority_header_maps,
                                                    [](const std::string& w) { log::warn(w); });
        } catch (const conf::ConfigError& e) {
            config_fatal(e);
        }
    }
    // The lanes' and destinations' shares and the finch policy's count each
    // transport's agents.
    if (params.lanes() || params.destination_shares || params.finch_policy_used)
        params.transport_process_limits = qmgr::transport_process_limits(params);
    // The state store (destination state and control settings), out of
    // reach once chrooted: opened with mail_owner's ids, and checked (in a
    // child process) while this process has one thread.
    std::shared_ptr<state::Store> state_store;
    if (!cl->stdin_mode) state_store = qmgr::open_state_store(params);
    // The adaptive limits' reply rules, in the configuration directory.
    std::optional<qmgr::RegexTable> reply_rules;
    if (!params.cqmgr_adaptive_limit_transports.empty() &&
        !params.cqmgr_adaptive_reply_rules.empty())
        reply_rules =
            qmgr::RegexTable::open(params.cqmgr_adaptive_reply_rules, [](const std::string& w) {
                log::warn("cqmgr_adaptive_reply_rules: " + w);
            });
    // The control socket serves root and mail_owner and belongs to
    // mail_owner: the account is looked up now, as the jail has no
    // password file.
    const auto control_owner = qmgr::ControlSurface::socket_owner(params);
    // The metrics endpoint's sockets, when configured, so that a privileged
    // port works too (metrics_endpoint.hpp): a busy one is waited for a
    // little while root can still open it; another is retried later.
    std::unique_ptr<qmgr::MetricsEndpoint> metrics;
    if (!params.cqmgr_metrics_listen.empty() && !cl->stdin_mode) {
        metrics = std::make_unique<qmgr::MetricsEndpoint>(
            params.cqmgr_metrics_listen,
            static_cast<size_t>(params.cqmgr_metrics_destination_limit));
        metrics->open(std::chrono::seconds(5));
    }
    // A fatal error, too, ends the endpoint's thread before exit().
    log::set_exit_hook([&metrics] {
        if (metrics) metrics->stop();
    });
    qmgr::enter_jail(cl->chroot ? params.queue_directory : std::string(),
                     cl->unprivileged ? params.mail_owner : std::string());

    // One thread runs the loop and does all I/O; other threads (the
    // metrics listener's) only post to it.  So the reactor need not lock
    // around each socket operation, while posting stays safe.
    asio::io_context io(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO);
    std::unique_ptr<qmgr::QueueManager> qm;
    auto stop = [&io, &qm, &metrics] {
        // Master went away or is reloading: stop at once, like stock
        // (messages in active are picked up by the next queue manager),
        // after the destination state's last commit. Spare shared
        // concurrency leases go back first, so that the next queue manager
        // (and the other hosts) need not wait for them to expire.  The
        // metrics endpoint's thread ends before exit() runs the static
        // destructors, which it must not outlive.
        if (qm) qm->exiting();
        io.stop();
        if (qm) qm->save_state();
        if (metrics) metrics->stop();
        std::exit(0);
    };
    auto pre_accept = [&tables, &qm, &metrics] {
        // Like stock, look at the tables before taking a trigger: a new
        // process picks up their new contents, and the trigger too.
        if (auto name = tables.changed()) {
            log::info("table " + *name + " has changed -- restarting");
            if (qm) qm->exiting();
            if (qm) qm->save_state();
            if (metrics) metrics->stop();
            std::exit(0);
        }
    };
    auto on_trigger = [&qm](std::string_view bytes) { qm->on_trigger(bytes); };
    qmgr::MasterLink master(io, cl->transport, pre_accept, on_trigger, stop);
    qmgr::SystemClock clock;
    qm = std::make_unique<qmgr::QueueManager>(io, cf, params, clock, flush_domains, master,
                                              state_store, std::move(reply_rules),
                                              std::move(limit_tables));
    qm->use_priorities(std::move(priorities));

    if (cl->stdin_mode) {
        // One trigger from standard input, then exit, as stock's stand-alone mode.
        char buf[1024];
        ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0) log::fatal(std::string("read: ") + (n < 0 ? std::strerror(errno) : "EOF"));
        on_trigger(std::string_view(buf, static_cast<size_t>(n)));
        return 0;
    }
    if (!master.start()) log::debug("no master descriptors: running stand-alone");

    asio::signal_set signals(io, SIGTERM, SIGINT);
    signals.async_wait([&](const error_code& ec, int) {
        if (!ec) stop();
    });

    ::signal(SIGALRM, watchdog_fired);
    asio::steady_timer watchdog(io);
    watchdog_pet(watchdog, params.qmgr_daemon_timeout);

    // The control socket, once the process has its final identity.
    qmgr::ControlSurface control(io, params, *qm, flush_domains, std::move(state_store), clock,
                                 control_owner, std::string("cqmgr ") + CQMGR_VERSION);
    control.start();

    if (metrics)
        metrics->attach(io, [&qm] {
            return qmgr::take_metrics_snapshot(qm->scheduler(), qm->counters(),
                                               qm->messages_in_active());
        });
    qm->start();
    io.run();
    log::set_exit_hook(nullptr); // it refers to `metrics`
    metrics.reset();             // its thread goes before the loop does
    return 0;
}
