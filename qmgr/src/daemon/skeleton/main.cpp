// cqmgr: a drop-in queue manager for Postfix.  master(8) runs it from the
// `qmgr` line of master.cf, e.g.  qmgr unix n - n 300 1 cqmgr
//
// main() follows Postfix's daemon skeleton, step by step: read the command
// line, main.cf with the -o overrides and every parameter, and open logging
// (daemon_config.cpp: a value stock refuses stops us with stock's text);
// chdir to the queue directory; pre_jail() opens, as root, what must be
// opened outside the jail (pre_jail.cpp, the privilege model); enter the
// jail (-c chroot, -u mail_owner); post_jail() builds the queue manager;
// serve() serves triggers.  With -S the one trigger on standard input is
// served and the process exits, as stock does.
#include "control_surface.hpp"
#include "daemon_config.hpp"
#include "info_options.hpp"
#include "jail.hpp"
#include "log.hpp"
#include "master_link.hpp"
#include "mx_provider_source.hpp"
#include "mx_resolver.hpp"
#include "pre_jail.hpp"
#include "queue_manager.hpp"
#include "self_check.hpp"
#include "shutdown.hpp"
#include "watchdog.hpp"

#include <cstring>
#include <optional>
#include <signal.h>
#include <unistd.h>

using namespace cqmgr;

namespace {

// The daemon after the jail.  One thread runs the loop and does all I/O;
// other threads (the metrics listener's) only post to it.  So the reactor
// need not lock around each socket operation, while posting stays safe.
struct Daemon {
    qmgr::DaemonConfig& config;
    qmgr::Preopened& opened;
    asio::io_context io{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
    std::unique_ptr<qmgr::QueueManager> qm{}; // goes after the master link
    std::optional<qmgr::MasterLink> master{};
    // The MX path of the providers (before the queue manager goes: its
    // lookups call back into the providers).
    std::unique_ptr<qmgr::MxResolver> mx_resolver{};
    std::unique_ptr<qmgr::MxProviderSource> mx_source{};
    qmgr::SystemClock clock{};
};

// The providers' MX path, on the loop, with the channel opened before the
// jail: destinations of transports that follow MX records join the
// provider that all their MX hosts belong to.
void use_mx_lookups(Daemon& d) {
    qmgr::Providers* providers = d.qm->providers();
    if (!providers || !d.opened.mx_channel) return;
    d.mx_resolver =
        std::make_unique<qmgr::MxResolver>(d.io.get_executor(), std::move(*d.opened.mx_channel),
                                           qmgr::mx_resolver_options(d.config.params));
    d.opened.mx_channel.reset();
    d.mx_source = std::make_unique<qmgr::MxProviderSource>(*d.mx_resolver, providers->maps(),
                                                           std::move(d.opened.mx_agents));
    providers->use_mx(d.mx_source.get());
}

// After the jail, as stock's post-jail initialisation: master's link (its
// triggers go to the queue manager) and the queue manager itself.
void post_jail(Daemon& d) {
    d.master.emplace(
        d.io, d.config.cl.transport,
        [&d] { restart_if_tables_changed(d.opened.tables, d.qm.get(), d.opened.metrics.get()); },
        [&d](std::string_view bytes) { d.qm->on_trigger(bytes); },
        [&d] { stop_daemon(d.io, d.qm.get(), d.opened.metrics.get()); });
    d.qm = std::make_unique<qmgr::QueueManager>(
        d.io, d.config.cf, d.config.params, d.clock, d.opened.flush_domains, *d.master,
        d.opened.state_store, std::move(d.opened.reply_rules), std::move(d.opened.limit_tables));
    d.qm->use_priorities(std::move(d.opened.priorities));
    if (d.opened.reply_actions) d.qm->use_reply_actions(std::move(*d.opened.reply_actions));
    d.qm->use_senders(std::move(d.opened.senders));
    use_mx_lookups(d);
}

// Serves triggers until master goes away; with -S, only the one on
// standard input, as stock's stand-alone mode.
int serve(Daemon& d) {
    const conf::QmgrParams& params = d.config.params;
    if (d.config.cl.stdin_mode) {
        char buf[1024];
        ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0) log::fatal(std::string("read: ") + (n < 0 ? std::strerror(errno) : "EOF"));
        d.qm->on_trigger(std::string_view(buf, static_cast<size_t>(n)));
        return 0;
    }
    if (!d.master->start()) log::debug("no master descriptors: running stand-alone");

    asio::signal_set signals(d.io, SIGTERM, SIGINT);
    signals.async_wait([&d](const error_code& ec, int) {
        if (!ec) stop_daemon(d.io, d.qm.get(), d.opened.metrics.get());
    });
    qmgr::Watchdog watchdog(d.io, params.qmgr_daemon_timeout);

    // The control socket, once the process has its final identity.
    qmgr::ControlSurface control(d.io, params, *d.qm, d.opened.flush_domains,
                                 std::move(d.opened.state_store), d.clock, d.opened.control_owner,
                                 std::string("cqmgr ") + CQMGR_VERSION);
    control.start();

    if (d.opened.metrics)
        d.opened.metrics->attach(d.io, [&d] {
            auto s = qmgr::take_metrics_snapshot(
                d.qm->scheduler(), d.qm->counters(), d.qm->messages_in_active(), d.qm->providers(),
                static_cast<size_t>(d.config.params.cqmgr_metrics_provider_limit));
            if (d.mx_resolver) s.mx = d.mx_resolver->stats();
            return s;
        });
    d.qm->start();
    d.io.run();
    log::set_exit_hook(nullptr); // it refers to the metrics endpoint
    d.opened.metrics.reset();    // its thread goes before the loop does
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    if (argc == 2 && qmgr::answer_info_option(argv[1], CQMGR_VERSION)) return 0;
    // master passes options first ("-n qmgr -t unix ..."), never a bare
    // word: "check" comes from someone who typed it.
    if (argc >= 2 && std::strcmp(argv[1], "check") == 0) return qmgr::run_self_check(argc, argv);

    qmgr::DaemonConfig config = qmgr::load_daemon_config(argc, argv);
    const conf::QmgrParams& params = config.params;
    if (::chdir(params.queue_directory.c_str()) < 0)
        log::fatal("chdir(\"" + params.queue_directory + "\"): " + std::strerror(errno));
    qmgr::Preopened opened = qmgr::pre_jail(config);
    qmgr::enter_jail(config.cl.chroot ? params.queue_directory : std::string(),
                     config.cl.unprivileged ? params.mail_owner : std::string());

    Daemon daemon{config, opened};
    post_jail(daemon);
    return serve(daemon);
}
