#include "settings.hpp"

#include "log.hpp"

#include <unistd.h>

namespace cqmgr::qmgr {

void register_defaults(conf::MainCf& cf) {
    char host[256] = "localhost";
    ::gethostname(host, sizeof host - 1);
    cf.set_default("myhostname", host);
    cf.set_default("queue_directory", "/var/spool/postfix");
    cf.set_default("mail_owner", "postfix");
    cf.set_default("syslog_name", "${multi_instance_name?{$multi_instance_name}:{postfix}}");
    cf.set_default("syslog_facility", "mail");
    cf.set_default("postlog_service_name", "postlog");
    cf.set_default("hash_queue_names", "deferred, defer");
    cf.set_default("double_bounce_sender", "double-bounce");
}

Settings Settings::load(const conf::MainCf& cf) {
    Settings s;
    s.config_dir = cf.config_dir();
    s.queue_directory = cf.str("queue_directory");
    s.mail_owner = cf.str("mail_owner");
    s.syslog_name = cf.str("syslog_name");
    s.myhostname = cf.str("myhostname");
    s.hash_queue_names = cf.str("hash_queue_names");
    s.hash_queue_depth = cf.integer("hash_queue_depth", 1, 1, 16);
    s.in_flow_delay = cf.time("in_flow_delay", "1s", 's', 0, 10);
    s.default_process_limit = cf.integer("default_process_limit", 100, 1);
    s.queue_run_delay = cf.time("queue_run_delay", "300s", 's', 1);
    s.minimal_backoff_time = cf.time("minimal_backoff_time", "300s", 's', 1);
    s.maximal_backoff_time = cf.time("maximal_backoff_time", "4000s", 's', 1);
    s.maximal_queue_lifetime = cf.time("maximal_queue_lifetime", "5d", 'd', 0, 8640000);
    s.bounce_queue_lifetime = cf.time("bounce_queue_lifetime", "5d", 'd', 0, 8640000);
    if (s.bounce_queue_lifetime > s.maximal_queue_lifetime) {
        log::warn("bounce_queue_lifetime is larger than maximal_queue_lifetime - adjusting "
                  "bounce_queue_lifetime");
        s.bounce_queue_lifetime = s.maximal_queue_lifetime;
    }
    s.transport_retry_time = cf.time("transport_retry_time", "60s", 's', 1);
    s.qmgr_ipc_timeout = cf.time("qmgr_ipc_timeout", "60s", 's', 1);
    s.daemon_timeout = cf.time("daemon_timeout", "18000s", 's', 1);
    s.message_active_limit = cf.integer("qmgr_message_active_limit", 20000, 1);
    s.message_recipient_limit = cf.integer("qmgr_message_recipient_limit", 20000, 1);
    if (s.message_recipient_limit < s.message_active_limit) {
        log::warn("qmgr_message_recipient_limit is smaller than qmgr_message_active_limit - "
                  "adjusting qmgr_message_recipient_limit");
        s.message_recipient_limit = s.message_active_limit;
    }
    if (cf.raw("rewrite_service_name")) s.rewrite_service_name = cf.str("rewrite_service_name");
    if (cf.raw("bounce_service_name")) s.bounce_service_name = cf.str("bounce_service_name");
    if (cf.raw("defer_service_name")) s.defer_service_name = cf.str("defer_service_name");
    if (cf.raw("trace_service_name")) s.trace_service_name = cf.str("trace_service_name");
    s.default_filter_nexthop = cf.str("default_filter_nexthop");
    s.double_bounce_sender = cf.str("double_bounce_sender");
    s.defer_transports = cf.list("defer_transports");
    s.disable_verp_bounces = cf.boolean("disable_verp_bounces", false);
    s.confirm_delay_cleared = cf.boolean("confirm_delay_cleared", false);
    return s;
}

TransportSettings Settings::for_transport(const conf::MainCf& cf, const std::string& t) const {
    // A transport-specific value wins; otherwise the default_* value; `local`
    // has its own registered defaults (concurrency 2, one recipient).
    auto pick_int = [&](const std::string& suffix, const std::string& fallback, int64_t def,
                        int64_t min) {
        std::string name = t + suffix;
        if (cf.raw(name)) return cf.integer(name, cf.integer(fallback, def, min), min);
        return cf.integer(fallback, def, min);
    };
    auto pick_time = [&](const std::string& suffix, const std::string& fallback) {
        std::string name = t + suffix;
        int64_t def = cf.time(fallback, "0s");
        if (cf.raw(name)) return cf.time(name, std::to_string(def) + "s");
        return def;
    };
    bool is_local = t == "local";
    TransportSettings ts;
    ts.dest_concurrency_limit = pick_int("_destination_concurrency_limit",
                                         is_local ? "local_destination_concurrency_limit"
                                                  : "default_destination_concurrency_limit",
                                         is_local ? 2 : 20, 0);
    ts.dest_recipient_limit = pick_int("_destination_recipient_limit",
                                       is_local ? "local_destination_recipient_limit"
                                                : "default_destination_recipient_limit",
                                       is_local ? 1 : 50, 0);
    ts.initial_concurrency =
        pick_int("_initial_destination_concurrency", "initial_destination_concurrency", 5, 1);
    ts.failed_cohort_limit = pick_int("_destination_concurrency_failed_cohort_limit",
                                      "default_destination_concurrency_failed_cohort_limit", 1, 0);
    ts.dest_rate_delay = pick_time("_destination_rate_delay", "default_destination_rate_delay");
    ts.transport_rate_delay = pick_time("_transport_rate_delay", "default_transport_rate_delay");
    if (ts.dest_rate_delay > 0) ts.dest_concurrency_limit = 1;
    if (ts.dest_concurrency_limit > 0 && ts.initial_concurrency > ts.dest_concurrency_limit)
        ts.initial_concurrency = ts.dest_concurrency_limit;
    return ts;
}

} // namespace cqmgr::qmgr
