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
#include "metrics.hpp"
#include "post_jail.hpp"
#include "pre_jail.hpp"
#include "self_check.hpp"
#include "shutdown.hpp"
#include "watchdog.hpp"

#include <cstring>
#include <signal.h>
#include <unistd.h>

using namespace cqmgr;

namespace {

using qmgr::Daemon;

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

    if (d.opened.metrics) {
        d.opened.metrics->attach(d.io, {[&d] { return qmgr::daemon_metrics(d); },
                                        [&d] { return qmgr::daemon_readiness(d); }, CQMGR_VERSION});
        d.qm->probe_rewrite(); // for /readyz, without waiting for mail
    }
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
    qmgr::post_jail(daemon);
    return serve(daemon);
}
