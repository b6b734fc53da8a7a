// cqmgr: a drop-in queue manager for Postfix.  master(8) runs it from the
// `qmgr` line of master.cf, e.g.  qmgr unix n - n 300 1 cqmgr
//
// Start-up follows the stock trigger server: read main.cf (from MAIL_CONFIG
// or /etc/postfix), apply -o overrides, open logging, chdir to the queue
// directory, drop privileges with -u, then serve triggers forever.
#include "cqmgr/conf/command_line.hpp"
#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "log.hpp"
#include "master_link.hpp"
#include "queue_manager.hpp"
#include "settings.hpp"
#include "table_watch.hpp"

#include <cstdlib>
#include <cstring>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

using namespace cqmgr;

namespace {

// Switches to mail_owner's uid, gid and supplementary groups.
void drop_privileges(const std::string& owner) {
    passwd* pw = ::getpwnam(owner.c_str());
    if (!pw) log::fatal("unknown mail_owner user: " + owner);
    if (::setgid(pw->pw_gid) < 0) log::fatal(std::string("setgid: ") + std::strerror(errno));
    if (::getuid() == 0 && ::initgroups(owner.c_str(), pw->pw_gid) < 0)
        log::fatal(std::string("initgroups: ") + std::strerror(errno));
    if (::setuid(pw->pw_uid) < 0) log::fatal(std::string("setuid: ") + std::strerror(errno));
}

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
std::string short_host(const std::string& host) { return host.substr(0, host.find('.')); }

} // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);

    std::string err;
    auto cl = conf::parse_command_line(argc, argv, err);
    if (!cl) {
        std::fprintf(stderr, "cqmgr: fatal: %s\n", err.c_str());
        return 1;
    }

    // Warnings raised before logging is open are held, then flushed; after
    // that they go straight to the log.
    std::vector<std::string> early_warnings;
    bool logging_up = false;
    conf::MainCf cf([&](const std::string& w) {
        if (logging_up) log::warn(w);
        else early_warnings.push_back(w);
    });
    // A configuration error is fatal where it is fatal for stock qmgr.
    auto config_fatal = [&](const conf::ConfigError& e) {
        if (logging_up) log::fatal(e.what());
        std::fprintf(stderr, "cqmgr: fatal: %s\n", e.what());
        std::exit(1);
    };
    try {
        conf::register_defaults(cf);
        std::string config_dir = conf::resolve_config_dir(*cl);
        if (!cf.load_dir(config_dir)) {
            std::fprintf(stderr, "cqmgr: fatal: %s\n", cf.error().c_str());
            return 1;
        }
        for (auto& [name, value] : cl->overrides) cf.set(name, value);
        cf.set("process_name", cl->process_name);
        cf.set("service_name", cl->service_name);

        // Log under "<syslog_name>/<service>", i.e. postfix/qmgr, like stock.
        log::Options lo;
        lo.tag = cf.str("syslog_name") + "/" + cl->service_name;
        lo.verbose = cl->verbose;
        lo.facility = cf.str("syslog_facility");
        if (!cf.str("maillog_file").empty()) {
            const char* svc = std::getenv("POSTLOG_SERVICE");
            lo.postlog_path = svc && *svc ? svc
                                          : cf.str("queue_directory") + "/public/" +
                                                cf.str("postlog_service_name");
            const char* host = std::getenv("POSTLOG_HOSTNAME");
            lo.hostname = short_host(host && *host ? host : cf.str("myhostname"));
        }
        log::init(lo);
        logging_up = true;
        for (auto& w : early_warnings) log::warn(w);
    } catch (const conf::ConfigError& e) {
        config_fatal(e);
    }

    if (auto why = conf::check_trigger_server(*cl)) log::fatal(*why);

    qmgr::Settings settings;
    try {
        settings = qmgr::Settings::load(cf);
    } catch (const conf::ConfigError& e) {
        config_fatal(e);
    }
    // Before chroot and the privilege drop, as stock reads its lists then.
    qmgr::FlushDomains flush_domains(settings.fast_flush_domains, settings.flush_parent_style);
    qmgr::TableWatch tables(flush_domains.tables());
    if (::chdir(settings.queue_directory.c_str()) < 0)
        log::fatal("chdir " + settings.queue_directory + ": " + std::strerror(errno));
    if (cl->chroot && ::chroot(".") < 0) log::fatal(std::string("chroot: ") + std::strerror(errno));
    if (cl->unprivileged) drop_privileges(settings.mail_owner);

    asio::io_context io(1);
    auto stop = [&io] {
        // Master went away or is reloading: stop at once, like stock
        // (messages in active are picked up by the next queue manager).
        io.stop();
        std::exit(0);
    };
    std::unique_ptr<qmgr::QueueManager> qm;
    auto on_trigger = [&qm, &tables](std::string_view bytes) {
        // Like stock, look at the tables before taking the trigger: a new
        // process picks up their new contents.
        if (auto name = tables.changed()) {
            log::info("table " + *name + " has changed -- restarting");
            std::exit(0);
        }
        qm->on_trigger(bytes);
    };
    qmgr::MasterLink master(io, cl->transport, on_trigger, stop);
    qm = std::make_unique<qmgr::QueueManager>(io, cf, settings, flush_domains, master);
    if (!master.start()) log::debug("no master descriptors: running stand-alone");

    asio::signal_set signals(io, SIGTERM, SIGINT);
    signals.async_wait([&](const error_code& ec, int) {
        if (!ec) stop();
    });

    ::signal(SIGALRM, watchdog_fired);
    asio::steady_timer watchdog(io);
    watchdog_pet(watchdog, settings.daemon_watchdog);

    qm->start();
    io.run();
    return 0;
}
