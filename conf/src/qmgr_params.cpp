#include "cqmgr/conf/qmgr_params.hpp"

#include "cqmgr/conf/compat_level.hpp"
#include "cqmgr/conf/logical_lines.hpp"
#include "cqmgr/conf/param_table.hpp"
#include "cqmgr/conf/scheduler_policy.hpp"
#include "cqmgr/conf/values.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <grp.h>
#include <pwd.h>
#include <stdexcept>
#include <strings.h>
#include <sys/stat.h>

namespace cqmgr::conf {

namespace {

// Reads one parameter with its type, default and bounds.
QmgrParams::Value read_param(const MainCf& cf, const ParamSpec& p) {
    std::string name(p.name);
    switch (p.type) {
    case ParamType::String:
        return cf.str(name, p.def, static_cast<int>(p.min), static_cast<int>(p.max));
    case ParamType::Int:
        return cf.integer(name, parse_int(p.def).value_or(0), p.min, p.max);
    case ParamType::Long:
        return cf.long_integer(name, parse_long(p.def).value_or(0), p.min, p.max);
    case ParamType::Bool:
        return cf.boolean(name, p.def == "yes");
    case ParamType::Time:
        return cf.time(name, p.def, 's', p.min, p.max);
    }
    return std::string();
}

// True for a listen address of the metrics endpoint (qmgr/src/metrics_listen.hpp):
// PORT, IPv4:PORT or [IPv6]:PORT, the port from 1 to 65535.
bool listen_address_ok(const std::string& a) {
    size_t colon = a.rfind(':');
    std::string port = colon == std::string::npos ? a : a.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos)
        return false;
    if (int p = std::stoi(port); p < 1 || p > 65535) return false;
    if (colon == std::string::npos) return true;
    std::string host = a.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        return host.find_first_not_of("0123456789abcdefABCDEF:.", 1) == host.size() - 1;
    int dots = 0;
    for (size_t i = 0, start = 0; i <= host.size(); ++i) {
        if (i < host.size() && host[i] != '.') {
            if (!std::isdigit(static_cast<unsigned char>(host[i])) || i - start >= 3) return false;
            continue;
        }
        if (i == start || std::stoi(host.substr(start, i - start)) > 255) return false;
        dots += i < host.size();
        start = i + 1;
    }
    return dots == 3;
}

// Collects typed values and applies the checks Postfix makes while it reads.
class Reader {
  public:
    Reader(const MainCf& cf, QmgrParams& out) : cf_(cf), out_(out) {}

    // Reads the named parameters (in table order) from `table`.
    void read(std::span<const ParamSpec> table, std::string_view first, std::string_view last) {
        bool on = false;
        for (auto& p : table) {
            if (p.name == first) on = true;
            if (on && p.reader != ParamReader::Master)
                out_.values[std::string(p.name)] = read_param(cf_, p);
            if (p.name == last) return;
        }
    }

    // Typed access to values already read.
    const std::string& s(std::string_view n) const { return std::get<std::string>(get(n)); }
    int64_t i(std::string_view n) const { return std::get<int64_t>(get(n)); }
    bool b(std::string_view n) const { return std::get<bool>(get(n)); }

    // Stops with a message in Postfix's "file DIR/main.cf: parameter ..." form.
    // `warning` is what Postfix complains of just before (may be empty).
    [[noreturn]] void fatal_main_cf(const std::string& name, const std::string& text,
                                    const std::string& warning = {}) const {
        throw ConfigError(cf_.where(name), "file " + s("config_directory") + "/main.cf: " + text,
                          {}, warning);
    }

  private:
    // A value already read (a missing one is a bug in the reading order).
    const QmgrParams::Value& get(std::string_view n) const {
        auto it = out_.values.find(n);
        if (it == out_.values.end())
            throw std::logic_error("parameter not read: " + std::string(n));
        return it->second;
    }

    const MainCf& cf_;
    QmgrParams& out_;
};

// The syslog facility names Postfix accepts on Linux.
bool known_facility(const std::string& name) {
    static const std::array<std::string_view, 20> names = {
        "auth",   "authpriv", "cron",   "daemon", "ftp",    "kern",   "lpr",
        "mail",   "news",     "syslog", "user",   "uucp",   "local0", "local1",
        "local2", "local3",   "local4", "local5", "local6", "local7"};
    return std::find(names.begin(), names.end(), name) != names.end();
}

// mail_owner, default_privs and setgid_group must exist, be unprivileged,
// and not share IDs (Postfix checks this in every daemon).
void check_accounts(const Reader& r) {
    auto user = [&](const char* param) {
        const std::string& name = r.s(param);
        passwd* pw = ::getpwnam(name.c_str());
        if (!pw)
            r.fatal_main_cf(param, std::string("parameter ") + param +
                                       ": unknown user name value: " + name);
        if (pw->pw_uid == 0)
            r.fatal_main_cf(param, std::string("parameter ") + param + ": user " + name +
                                       " has privileged user ID");
        if (pw->pw_gid == 0)
            r.fatal_main_cf(param, std::string("parameter ") + param + ": user " + name +
                                       " has privileged group ID");
        return std::pair<uid_t, gid_t>(pw->pw_uid, pw->pw_gid);
    };
    auto [default_uid, default_gid] = user("default_privs");
    auto [owner_uid, owner_gid] = user("mail_owner");
    if (passwd* pw = ::getpwuid(owner_uid); pw && r.s("mail_owner") != pw->pw_name)
        r.fatal_main_cf("mail_owner", "parameter mail_owner: user " + r.s("mail_owner") +
                                          " has same user ID as " + pw->pw_name);
    const std::string& group = r.s("setgid_group");
    struct group* gr = ::getgrnam(group.c_str());
    if (!gr)
        r.fatal_main_cf("setgid_group", "parameter setgid_group: unknown group name: " + group);
    gid_t sgid = gr->gr_gid;
    if (sgid == 0)
        r.fatal_main_cf("setgid_group",
                        "parameter setgid_group: group " + group + " has privileged group ID");
    if (struct group* g2 = ::getgrgid(sgid); g2 && group != g2->gr_name)
        r.fatal_main_cf("setgid_group", "parameter setgid_group: group " + group +
                                            " has same group ID as " + g2->gr_name);
    const std::string& dp = r.s("default_privs");
    const std::string& mo = r.s("mail_owner");
    if (dp == mo)
        r.fatal_main_cf("default_privs",
                        "parameters default_privs and mail_owner specify the same user " + dp);
    if (default_uid == owner_uid)
        r.fatal_main_cf("default_privs",
                        "parameters default_privs and mail_owner: users " + dp + " and " + mo +
                            " have the same user ID: " + std::to_string(owner_uid));
    if (default_gid == owner_gid)
        r.fatal_main_cf("default_privs",
                        "parameters default_privs and mail_owner: users " + dp + " and " + mo +
                            " have the same group ID: " + std::to_string(owner_gid));
    if (default_gid == sgid)
        r.fatal_main_cf("default_privs", "parameters default_privs and setgid_group: user " + dp +
                                             " and group " + group +
                                             " have the same group ID: " + std::to_string(sgid));
    if (owner_gid == sgid)
        r.fatal_main_cf("mail_owner", "parameters mail_owner and setgid_group: user " + mo +
                                          " and group " + group +
                                          " have the same group ID: " + std::to_string(sgid));
}

// Reads the first line of the file a myorigin value names, with white space
// trimmed, refusing what Postfix's safe_open() refuses; throws ConfigError.
std::string read_myorigin_file(const std::string& path, const std::string& where) {
    auto fail = [&](const std::string& why) -> std::string {
        throw ConfigError(where, path + ": " + why);
    };
    std::ifstream in(path);
    if (!in) fail(std::string("cannot open file: ") + std::strerror(errno));
    struct stat st {
    }, lst{};
    if (::stat(path.c_str(), &st) < 0)
        fail(std::string("cannot open file: ") + std::strerror(errno));
    if (st.st_nlink != 1) fail("file has " + std::to_string(st.st_nlink) + " hard links");
    if (S_ISDIR(st.st_mode)) fail("file is a directory");
    if (::lstat(path.c_str(), &lst) < 0)
        fail(std::string("file status changed unexpectedly: ") + std::strerror(errno));
    if (S_ISLNK(lst.st_mode)) {
        // Only a root-owned link in a root-owned directory that only root
        // may write is followed.
        std::string parent = path.substr(0, path.rfind('/'));
        if (parent.empty()) parent = "/";
        struct stat pst {};
        bool ok = lst.st_uid == 0 && ::stat(parent.c_str(), &pst) == 0 && pst.st_uid == 0 &&
                  (pst.st_mode & (S_IWGRP | S_IWOTH)) == 0;
        if (!ok) fail("file is a symbolic link");
    }
    std::string line;
    std::getline(in, line);
    size_t b = 0, e = line.size();
    while (b < e && is_postfix_space(line[b]))
        ++b;
    while (e > b && is_postfix_space(line[e - 1]))
        --e;
    return line.substr(b, e - b);
}

// Case-insensitive equality (myhostname versus relayhost).
bool same_nocase(const std::string& a, const std::string& b) {
    return a.size() == b.size() && ::strcasecmp(a.c_str(), b.c_str()) == 0;
}

} // namespace

QmgrParams QmgrParams::load(const MainCf& cf, const MainCf::Warn& warn) {
    return load(cf, warn, Options{});
}

QmgrParams QmgrParams::load(const MainCf& given, const MainCf::Warn& warn, Options options) {
    MainCf cf = given;
    register_defaults(cf, system_hostname(), /*only_missing=*/true);
    QmgrParams q;
    Reader r(cf, q);
    auto G = global_params();

    // mail_params_init(), in Postfix's order, with its checks in between.
    r.read(G, "config_directory", "compatibility_level");
    if (!parse_compat_level(r.s("compatibility_level")))
        throw ConfigError(cf.where("compatibility_level"),
                          "malformed compatibility level syntax: \"" + r.s("compatibility_level") +
                              "\"");
    r.read(G, "mail_version", "known_tcp_ports");
    if (!known_facility(r.s("syslog_facility")))
        r.fatal_main_cf("syslog_facility",
                        "parameter syslog_facility: unrecognized value: " + r.s("syslog_facility"));
    r.read(G, "daemon_table_open_error_is_fatal", "respectful_logging");
    r.read(G, "myhostname", "mydomain");
    for (const char* n : {"myhostname", "mydomain"})
        if (auto why = hostname_problem(r.s(n)))
            r.fatal_main_cf(n, std::string("parameter ") + n + ": bad parameter value: " + r.s(n),
                            *why);
    r.read(G, "mail_name", "info_log_address_format");
    if (options.myorigin_from_file && r.s("myorigin").starts_with('/')) {
        std::string path = r.s("myorigin");
        std::string origin = read_myorigin_file(path, cf.where("myorigin"));
        if (origin.empty())
            throw ConfigError(cf.where("myorigin"), "myorigin file " + path + " is empty");
        q.values["myorigin"] = origin;
    }
    r.read(G, "default_process_limit", "in_flow_delay");
    if (options.check_accounts) check_accounts(r);
    r.read(G, "mynetworks", "mynetworks");
    if (same_nocase(r.s("myhostname"), r.s("relayhost")))
        throw ConfigError(cf.where("relayhost"),
                          "myhostname and relayhost parameter settings must not be identical: " +
                              r.s("myhostname"));
    if (r.s("myorigin").find_first_of(", \t\r\n") != std::string::npos)
        throw ConfigError(cf.where("myorigin"),
                          "myorigin parameter setting must not contain multiple values: " +
                              r.s("myorigin"));
    {
        const std::string& d = r.s("default_verp_delimiters");
        const std::string& f = r.s("verp_delimiter_filter");
        const char* why = d.size() != 2                       ? "bad VERP delimiter character count"
                          : f.find(d[0]) == std::string::npos ? "bad first VERP delimiter character"
                          : f.find(d[1]) == std::string::npos
                              ? "bad second VERP delimiter character"
                              : nullptr;
        if (why)
            r.fatal_main_cf(
                "default_verp_delimiters",
                std::string("parameters default_verp_delimiters and verp_delimiter_filter: ") +
                    why);
    }

    // qmgr's own tables.
    auto Q = qmgr_params();
    r.read(Q, Q.front().name, Q.back().name);

    q.qmgr_message_active_limit = r.i("qmgr_message_active_limit");
    q.qmgr_message_recipient_limit = r.i("qmgr_message_recipient_limit");
    q.qmgr_message_recipient_minimum = r.i("qmgr_message_recipient_minimum");
    q.default_recipient_limit = r.i("default_recipient_limit");
    q.default_extra_recipient_limit = r.i("default_extra_recipient_limit");
    q.default_recipient_refill_limit = r.i("default_recipient_refill_limit");
    q.default_recipient_refill_delay = r.i("default_recipient_refill_delay");
    q.default_delivery_slot_cost = r.i("default_delivery_slot_cost");
    q.default_delivery_slot_loan = r.i("default_delivery_slot_loan");
    q.default_delivery_slot_discount = r.i("default_delivery_slot_discount");
    q.default_minimum_delivery_slots = r.i("default_minimum_delivery_slots");
    q.initial_destination_concurrency = r.i("initial_destination_concurrency");
    q.default_destination_concurrency_limit = r.i("default_destination_concurrency_limit");
    q.default_destination_recipient_limit = r.i("default_destination_recipient_limit");
    q.local_destination_concurrency_limit = r.i("local_destination_concurrency_limit");
    q.local_destination_recipient_limit = r.i("local_destination_recipient_limit");
    q.default_destination_concurrency_failed_cohort_limit =
        r.i("default_destination_concurrency_failed_cohort_limit");
    q.default_destination_concurrency_positive_feedback =
        r.s("default_destination_concurrency_positive_feedback");
    q.default_destination_concurrency_negative_feedback =
        r.s("default_destination_concurrency_negative_feedback");
    q.destination_concurrency_feedback_debug = r.b("destination_concurrency_feedback_debug");
    q.default_destination_rate_delay = r.i("default_destination_rate_delay");
    q.default_transport_rate_delay = r.i("default_transport_rate_delay");
    q.queue_run_delay = r.i("queue_run_delay");
    q.minimal_backoff_time = r.i("minimal_backoff_time");
    q.maximal_backoff_time = r.i("maximal_backoff_time");
    q.maximal_queue_lifetime = r.i("maximal_queue_lifetime");
    q.bounce_queue_lifetime = r.i("bounce_queue_lifetime");
    q.transport_retry_time = r.i("transport_retry_time");
    q.qmgr_clog_warn_time = r.i("qmgr_clog_warn_time");
    q.qmgr_daemon_timeout = r.i("qmgr_daemon_timeout");
    q.qmgr_ipc_timeout = r.i("qmgr_ipc_timeout");
    q.defer_transports = split_list(r.s("defer_transports"));
    q.default_filter_nexthop = r.s("default_filter_nexthop");
    q.address_verify_pending_request_limit = r.i("address_verify_pending_request_limit");
    q.disable_verp_bounces = r.b("disable_verp_bounces");
    q.confirm_delay_cleared = r.b("confirm_delay_cleared");

    q.config_directory = r.s("config_directory");
    q.compatibility_level = r.s("compatibility_level");
    q.queue_directory = r.s("queue_directory");
    q.daemon_directory = r.s("daemon_directory");
    q.mail_owner = r.s("mail_owner");
    q.myorigin = r.s("myorigin");
    q.hash_queue_names = split_list(r.s("hash_queue_names"));
    q.hash_queue_depth = r.i("hash_queue_depth");
    q.enable_long_queue_ids = r.b("enable_long_queue_ids");
    q.dont_remove = r.i("dont_remove");
    q.myhostname = r.s("myhostname");
    q.double_bounce_sender = r.s("double_bounce_sender");
    q.recipient_delimiter = r.s("recipient_delimiter");
    q.owner_request_special = r.b("owner_request_special");
    q.smtputf8_enable = r.b("smtputf8_enable");
    q.helpful_warnings = r.b("helpful_warnings");
    q.in_flow_delay = r.i("in_flow_delay");
    q.default_process_limit = r.i("default_process_limit");
    q.daemon_timeout = r.i("daemon_timeout");
    q.ipc_idle = r.i("ipc_idle");
    q.ipc_ttl = r.i("ipc_ttl");
    q.rewrite_service_name = r.s("rewrite_service_name");
    q.bounce_service_name = r.s("bounce_service_name");
    q.defer_service_name = r.s("defer_service_name");
    q.trace_service_name = r.s("trace_service_name");
    q.address_verify_service_name = r.s("address_verify_service_name");
    q.flush_service_name = r.s("flush_service_name");
    q.queue_service_name = r.s("queue_service_name");
    q.relay_domains = r.s("relay_domains");
    q.fast_flush_domains = r.s("fast_flush_domains");
    q.parent_domain_matches_subdomains = split_list(r.s("parent_domain_matches_subdomains"));
    q.soft_bounce = r.b("soft_bounce");
    q.address_verify_negative_cache = r.b("address_verify_negative_cache");
    q.delay_logging_resolution_limit = r.i("delay_logging_resolution_limit");
    q.info_log_address_format = r.s("info_log_address_format");
    q.syslog_name = r.s("syslog_name");
    q.syslog_facility = r.s("syslog_facility");
    q.maillog_file = r.s("maillog_file");
    q.maillog_file_prefixes = r.s("maillog_file_prefixes");
    q.postlog_service_name = r.s("postlog_service_name");
    q.trigger_timeout = r.i("trigger_timeout");
    q.backwards_bounce_logfile_compatibility = r.b("backwards_bounce_logfile_compatibility");
    q.data_directory = r.s("data_directory");

    // cqmgr's own parameters: read by name, with their defaults here.
    q.cqmgr_control_socket =
        cf.str("cqmgr_control_socket", std::string(control::default_socket_path), 0);

    // cqmgr's own parameters.
    q.cqmgr_metrics_listen = cf.str("cqmgr_metrics_listen", "", 0);
    if (!q.cqmgr_metrics_listen.empty() && !listen_address_ok(q.cqmgr_metrics_listen))
        throw ConfigError(cf.where("cqmgr_metrics_listen"),
                          "file " + q.config_directory +
                              "/main.cf: parameter cqmgr_metrics_listen: bad value: \"" +
                              q.cqmgr_metrics_listen +
                              "\" (expected PORT, IPv4:PORT or [IPv6]:PORT)");
    // 0 is a valid value for these, and a minimum of 0 means "no bound" to
    // integer() and time(): negative values are checked here.
    auto not_negative = [&](const std::string& name, int64_t value) {
        if (value < 0)
            throw ConfigError(cf.where(name), "invalid " + name + " parameter value " +
                                                  std::to_string(value) + " < 0");
        return value;
    };
    q.cqmgr_metrics_destination_limit = not_negative(
        "cqmgr_metrics_destination_limit", cf.integer("cqmgr_metrics_destination_limit", 50, 0));

    q.cqmgr_adaptive_limit_transports = cf.list("cqmgr_adaptive_limit_transports");
    q.cqmgr_adaptive_reply_rules = cf.str("cqmgr_adaptive_reply_rules", "", 0);
    q.cqmgr_adaptive_probe_deliveries = not_negative(
        "cqmgr_adaptive_probe_deliveries", cf.integer("cqmgr_adaptive_probe_deliveries", 500, 0));
    q.cqmgr_adaptive_probe_time = not_negative(
        "cqmgr_adaptive_probe_time", cf.time("cqmgr_adaptive_probe_time", "300s", 's', 0));
    q.cqmgr_adaptive_forget_time = cf.time("cqmgr_adaptive_forget_time", "3600s", 's', 1);
    q.cqmgr_adaptive_rate_margin = not_negative(
        "cqmgr_adaptive_rate_margin", cf.integer("cqmgr_adaptive_rate_margin", 10, 0, 99));
    q.cqmgr_backoff_jitter =
        not_negative("cqmgr_backoff_jitter", cf.integer("cqmgr_backoff_jitter", 0, 0, 100));
    q.cqmgr_state_database = cf.str("cqmgr_state_database", "$data_directory/cqmgr-state.lmdb", 0);

    q.cqmgr_redis_server = cf.str("cqmgr_redis_server", "", 0);
    q.cqmgr_redis_key_prefix = cf.str("cqmgr_redis_key_prefix", "cqmgr:", 0);
    q.cqmgr_redis_timeout_ms = cf.integer("cqmgr_redis_timeout_ms", 100, 1);
    q.cqmgr_cluster_lease_time = cf.time("cqmgr_cluster_lease_time", "30s", 's', 3);
    // Table lists: items end at commas and blanks, except inside {...}
    // (inline:{ a=1, b=2 }).
    auto tables = [&](const char* name) {
        std::vector<std::string> out;
        std::string text = cf.str(name, "", 0);
        size_t pos = 0;
        while (auto item = next_braced_item(text, pos, ", \t\r\n"))
            out.push_back(*item);
        return out;
    };
    q.cqmgr_rate_limits = tables("cqmgr_rate_limits");
    q.cqmgr_cluster_concurrency_limits = tables("cqmgr_cluster_concurrency_limits");
    q.cqmgr_recovery_rate =
        not_negative("cqmgr_recovery_rate", cf.integer("cqmgr_recovery_rate", 0, 0));
    q.cqmgr_dead_backlog = cf.boolean("cqmgr_dead_backlog", false);
    q.cqmgr_deferred_due_index = cf.boolean("cqmgr_deferred_due_index", false);
    q.cqmgr_resolve_cache_limit =
        not_negative("cqmgr_resolve_cache_limit", cf.integer("cqmgr_resolve_cache_limit", 0, 0));
    q.cqmgr_priority_maps = tables("cqmgr_priority_maps");
    q.cqmgr_priority_header_maps = tables("cqmgr_priority_header_maps");
    q.cqmgr_urgent_agent_share =
        not_negative("cqmgr_urgent_agent_share", cf.integer("cqmgr_urgent_agent_share", 0, 0, 100));
    q.cqmgr_bulk_agent_share =
        not_negative("cqmgr_bulk_agent_share", cf.integer("cqmgr_bulk_agent_share", 10, 0, 100));
    q.cqmgr_destination_agent_share = cf.percent("cqmgr_destination_agent_share", 0);
    q.destination_shares = q.cqmgr_destination_agent_share > 0;
    for (const std::string& name : cf.explicit_names())
        if (name.ends_with("_cqmgr_destination_agent_share") && cf.percent(name, 0) > 0)
            q.destination_shares = true;
    q.cqmgr_scheduler_policy = read_scheduler_policy(cf, "cqmgr_scheduler_policy", "rak");
    // A transport's own value is checked when the transport is first used
    // (as stock checks its per-transport values); here it only tells
    // whether master.cf's process limits will be needed.
    q.finch_policy_used = q.cqmgr_scheduler_policy == "finch";
    for (const auto& name : cf.explicit_names())
        if (name.ends_with("_cqmgr_scheduler_policy") && cf.str(name) == "finch")
            q.finch_policy_used = true;

    // qmgr's start-up adjustments (qmgr_post_init), with its warnings.
    auto say = [&](const std::string& text) {
        if (warn) warn(text);
    };
    if (q.qmgr_message_recipient_limit < q.qmgr_message_active_limit) {
        say("qmgr_message_recipient_limit is smaller than qmgr_message_active_limit - adjusting "
            "qmgr_message_recipient_limit");
        q.qmgr_message_recipient_limit = q.qmgr_message_active_limit;
    }
    if (q.bounce_queue_lifetime > q.maximal_queue_lifetime) {
        say("bounce_queue_lifetime is larger than maximal_queue_lifetime - adjusting "
            "bounce_queue_lifetime");
        q.bounce_queue_lifetime = q.maximal_queue_lifetime;
    }
    q.ipc_timeout = q.qmgr_ipc_timeout;
    q.configured_max_idle = r.i("max_idle");
    q.max_idle = 0;
    q.max_use = 0;
    return q;
}

} // namespace cqmgr::conf
