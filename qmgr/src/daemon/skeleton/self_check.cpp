#include "self_check.hpp"

#include "backoff_profiles.hpp"
#include "cluster_limits.hpp"
#include "cqmgr/conf/command_line.hpp"
#include "cqmgr/conf/compat_level.hpp"
#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/master_cf.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/conf/transport_params.hpp"
#include "regex_table.hpp"
#include "reply_action.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {

// Collects findings; `error()` and `warn()` add one each.
struct Findings {
    std::vector<CheckFinding> list;
    void error(std::string text) { list.push_back({true, std::move(text)}); }
    void warn(std::string text) { list.push_back({false, std::move(text)}); }
};

// A configuration error as the daemon would log it before it stops.
std::string describe(const conf::ConfigError& e) {
    std::string text = e.postfix_text();
    if (!e.detail().empty()) text += " (" + e.detail() + ")";
    if (!e.where().empty()) text = e.where() + ": " + text;
    return text;
}

// cqmgr_reply_actions' rules and the profiles their backoffs name: a result
// that is no action (or names no profile) is ignored when its rule matches.
void check_reply_actions(const conf::QmgrParams& params, Findings& out) {
    BackoffProfiles profiles;
    try {
        profiles = BackoffProfiles::open(params.cqmgr_backoff_profiles,
                                         [&out](const std::string& w) { out.warn(w); });
    } catch (const conf::ConfigError& e) {
        out.error(describe(e));
    }
    auto rules = RegexTable::open(params.cqmgr_reply_actions, [&out](const std::string& w) {
        out.warn("cqmgr_reply_actions: " + w);
    });
    for (size_t i = 0; rules && i < rules->size(); ++i) {
        auto a = parse_reply_action(rules->result(i));
        auto why = a ? profiles.resolve(*a) : Failure{a.error()};
        if (!why)
            out.warn("cqmgr_reply_actions: " + rules->label() + ", line " +
                     std::to_string(rules->line(i)) + ": bad result \"" + rules->result(i) +
                     "\": " + why.error().message());
    }
}

// The queue manager's service: the unix (or fifo) line named qmgr, as
// master.cf's stock line is; else the first line whose command is qmgr or
// cqmgr.
const conf::MasterService* queue_manager_service(const conf::MasterCf& master) {
    if (auto* s = master.find("qmgr", "unix")) return s;
    if (auto* s = master.find("qmgr", "fifo")) return s;
    for (const auto& s : master.services())
        if (s.command == "qmgr" || s.command == "cqmgr") return &s;
    return nullptr;
}

// The master.cf context master would spawn the queue manager with.
conf::MasterContext master_context(const conf::MainCf& cf) {
    conf::MasterContext ctx;
    ctx.daemon_directory = cf.str("daemon_directory");
    ctx.default_process_limit = cf.integer("default_process_limit", 100, 1);
    ctx.compat_level = conf::parse_compat_level(cf.str("compatibility_level")).value_or(0);
    return ctx;
}

// The transport part of a "transport:nexthop" value, or "" when empty.
std::string transport_of(const std::string& value) {
    return value.substr(0, value.find(':'));
}

// Transports main.cf sends mail to, each without a master.cf service that
// qmgr could connect to: mail for them would wait in the deferred queue.
void check_transports(const conf::MainCf& cf, const conf::MasterCf& master, Findings& out) {
    std::vector<std::string> known = master.transport_names();
    std::set<std::string> have(known.begin(), known.end());
    for (const char* param :
         {"default_transport", "relay_transport", "local_transport", "virtual_transport"}) {
        std::string t = transport_of(cf.str(param));
        if (t.empty() || have.count(t)) continue;
        out.error(std::string(param) + " = " + cf.str(param) + ": master.cf has no unix service " +
                  t + " with a private socket (mail for it would be deferred)");
    }
}

// What a chrooted queue manager cannot reach once it is inside
// queue_directory: everything it opens at start-up is opened before the
// chroot, so only the Redis server's socket is left.
void check_chroot(const conf::QmgrParams& params, Findings& out) {
    struct stat st {};
    if (::stat(params.queue_directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        out.error("queue_directory " + params.queue_directory +
                  ": not a directory (the qmgr service is chrooted there)");
        return;
    }
    const std::string& redis = params.cqmgr_redis_server;
    if (redis.empty()) return;
    auto target = cluster::parse_redis_target(redis);
    if (!target) return; // said already
    if (target->server.is_unix()) {
        const std::string& path = target->server.path;
        if (path.rfind(params.queue_directory + "/", 0) != 0)
            out.error("cqmgr_redis_server = " + redis + ": outside queue_directory " +
                      params.queue_directory + ", out of reach of a chrooted qmgr service");
        return;
    }
    // A host name is resolved at each connection, inside the jail.
    std::vector<cluster::RedisAddress> hosts = target->sentinels;
    if (!target->via_sentinel()) hosts.push_back(target->server);
    bool names = std::any_of(hosts.begin(), hosts.end(), [](const cluster::RedisAddress& a) {
        unsigned char buf[sizeof(in6_addr)];
        return ::inet_pton(AF_INET, a.host.c_str(), buf) != 1 &&
               ::inet_pton(AF_INET6, a.host.c_str(), buf) != 1;
    });
    if (names)
        for (const char* f : {"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf"})
            if (::access((params.queue_directory + f).c_str(), R_OK) != 0)
                out.warn("cqmgr_redis_server = " + redis + ": " + params.queue_directory + f +
                         " is missing: a chrooted qmgr service may not resolve the host name");
}

} // namespace

std::vector<CheckFinding> self_check(const std::string& config_dir) {
    Findings out;
    auto warn = [&out](const std::string& w) { out.warn(w); };
    conf::MainCf cf(warn);
    conf::register_defaults(cf);
    if (!cf.load_dir(config_dir)) {
        out.error(cf.error());
        return out.list;
    }
    conf::MasterCf master(warn);
    bool have_master = master.load_dir(config_dir);
    if (!have_master) out.error(master.error());

    // The qmgr line: its command in daemon_directory, and its -o settings,
    // which the daemon reads over main.cf's.
    const conf::MasterService* service = have_master ? queue_manager_service(master) : nullptr;
    std::optional<conf::MasterSpawn> spawn;
    if (have_master && service == nullptr)
        out.error(config_dir + "/master.cf: no qmgr service (stock's is "
                               "\"qmgr unix n - n 300 1 qmgr\")");
    if (service != nullptr) {
        try {
            spawn = conf::master_spawn(*service, master_context(cf));
            if (::access(spawn->path.c_str(), X_OK) != 0)
                out.error(service->where + ": command " + service->command + ": " + spawn->path +
                          " is missing or not executable (master would log \"bad command "
                          "startup -- throttling\" and no mail would leave the incoming queue)");
            // The arguments master would pass, checked as the daemon
            // checks them (process limit 1, a trigger transport type).
            std::vector<char*> argv;
            for (auto& a : spawn->argv)
                argv.push_back(a.data());
            auto cl = conf::parse_command_line(static_cast<int>(argv.size()), argv.data());
            if (!cl)
                out.error(service->where + ": " + cl.error().message());
            else if (auto refused = conf::check_trigger_server(*cl))
                out.error(service->where + ": " + *refused);
        } catch (const conf::ConfigError& e) {
            out.error(describe(e));
        }
        for (const auto& [name, value] : service->overrides())
            cf.set(name, value);
        cf.set("process_name", service->command);
        cf.set("service_name", service->service);
    }

    conf::QmgrParams params;
    try {
        params = conf::QmgrParams::load(cf, warn);
    } catch (const conf::ConfigError& e) {
        if (!e.warning().empty()) out.warn(e.warning());
        out.error(describe(e));
        if (have_master) check_transports(cf, master, out);
        return out.list;
    }
    // Per-transport values are read when mail for a transport first comes;
    // read every transport's now.
    if (have_master)
        for (const auto& t : master.transport_names())
            try {
                conf::read_transport_params(cf, params, t, warn);
            } catch (const conf::ConfigError& e) {
                out.error(describe(e));
            }
    try {
        ClusterLimits::open_tables(params);
    } catch (const conf::ConfigError& e) {
        out.error(describe(e));
    }
    // The daemon warns and runs without Redis (local limits only).
    if (!params.cqmgr_redis_server.empty() &&
        !cluster::parse_redis_target(params.cqmgr_redis_server))
        out.error("cqmgr_redis_server = " + params.cqmgr_redis_server +
                  ": not host:port, [ipv6]:port, unix:/path or sentinel:NAME@host:port,...");
    // The daemon learns per destination then, as without the setting.
    if (params.cqmgr_adaptive_limit_scope == "provider" &&
        (params.cqmgr_adaptive_limit_transports.empty() || params.cqmgr_provider_maps.empty()))
        out.warn("cqmgr_adaptive_limit_scope = provider has no effect without "
                 "cqmgr_adaptive_limit_transports and cqmgr_provider_maps");
    if (!params.cqmgr_adaptive_limit_transports.empty() &&
        !params.cqmgr_adaptive_reply_rules.empty())
        RegexTable::open(params.cqmgr_adaptive_reply_rules, [&out](const std::string& w) {
            // The daemon skips such a rule (or the table) and goes on.
            out.warn("cqmgr_adaptive_reply_rules: " + w);
        });
    if (!params.cqmgr_reply_actions.empty()) check_reply_actions(params, out);
    if (have_master) check_transports(cf, master, out);
    if (spawn && spawn->chroot) check_chroot(params, out);
    return out.list;
}

int run_self_check(int argc, char** argv) {
    std::string config_dir;
    int opt;
    // The options after "check", as getopt(3) sees a command of its own.
    --argc;
    ++argv;
    while ((opt = ::getopt(argc, argv, "c:")) != -1) {
        if (opt != 'c') {
            std::fprintf(stderr, "usage: cqmgr check [-c config_dir]\n");
            return 64;
        }
        config_dir = ::optarg;
    }
    if (::optind != argc) {
        std::fprintf(stderr, "usage: cqmgr check [-c config_dir]\n");
        return 64;
    }
    if (config_dir.empty()) {
        const char* env = std::getenv("MAIL_CONFIG");
        config_dir = env && *env ? env : "/etc/postfix";
    }
    int errors = 0;
    for (const auto& f : self_check(config_dir)) {
        std::printf("cqmgr: %s: %s\n", f.error ? "error" : "warning", f.text.c_str());
        errors += f.error;
    }
    return errors ? 1 : 0;
}

} // namespace cqmgr::qmgr
