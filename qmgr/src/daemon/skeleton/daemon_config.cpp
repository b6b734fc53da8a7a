#include "daemon_config.hpp"

#include "cqmgr/conf/param_table.hpp"
#include "log.hpp"

#include <cstdlib>
#include <optional>
#include <unistd.h>
#include <utility>

namespace cqmgr::qmgr {

namespace {

// The first label of a host name, as postlogd records show it.
std::string short_host(const std::string& host) {
    return host.substr(0, host.find('.'));
}

// Passes a configuration warning to the log.
void warn(const std::string& w) {
    log::warn(w);
}

} // namespace

void config_fatal(const conf::ConfigError& e) {
    if (!e.warning().empty()) log::warn(e.warning());
    log::fatal(e.postfix_text());
}

DaemonConfig load_daemon_config(int argc, char** argv) {
    // Logging comes first, with the default name, as in stock: what goes
    // wrong while main.cf is read is logged there.  -V adds standard error
    // only once main.cf is read, where stock's option loop turns it on.
    auto cl = conf::parse_command_line(argc, argv);
    std::string process_name = cl ? cl->process_name : "cqmgr";
    log::Options lo;
    lo.tag = "postfix/" + process_name;
    log::init(lo);

    conf::MainCf cf(warn);
    conf::QmgrParams params;
    try {
        conf::register_defaults(cf);
        if (!cf.load_dir(cl ? conf::resolve_config_dir(*cl) : "/etc/postfix"))
            log::fatal(cf.error());
        if (!cl) {
            log::set_stderr(true); // someone typed it: tell them, not only the log
            log::fatal(cl.error().message());
        }
        log::set_stderr(cl->log_to_stderr);
        for (auto& [name, value] : cl->overrides)
            cf.set(name, value);
        cf.set("process_name", cl->process_name);
        cf.set("service_name", cl->service_name);
        params = conf::QmgrParams::load(cf, warn);

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
    return DaemonConfig{std::move(*cl), std::move(cf), std::move(params)};
}

} // namespace cqmgr::qmgr
