#include "settings.hpp"

#include "feedback_debug.hpp"
#include "log.hpp"

#include <algorithm>
#include <unistd.h>

namespace cqmgr::qmgr {


Settings Settings::load(const conf::MainCf& cf) {
    Settings s;
    s.config_dir = cf.config_dir();
    s.queue_directory = cf.str("queue_directory");
    s.mail_owner = cf.str("mail_owner");
    s.syslog_name = cf.str("syslog_name");
    s.myhostname = cf.str("myhostname");
    s.hash_queue_names = cf.str("hash_queue_names");
    s.hash_queue_depth = cf.integer("hash_queue_depth", 1, 1);
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
    s.message_recipient_minimum = cf.integer("qmgr_message_recipient_minimum", 10, 1);
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
    s.log_internal_form = cf.str("info_log_address_format") == "internal";
    s.dont_remove = cf.integer("dont_remove", 0) != 0; // an int in Postfix
    // Default: yes from compatibility level 1 on (Postfix 3.0 semantics).
    std::string level = cf.str("compatibility_level");
    bool level_default = !level.empty() && level != "0";
    s.smtputf8_enable = cf.boolean("smtputf8_enable", level_default);
    s.daemon_watchdog = cf.time("qmgr_daemon_timeout", "1000s", 's', 1);
    s.helpful_warnings = cf.boolean("helpful_warnings", true);
    s.owner_request_special = cf.boolean("owner_request_special", true);
    s.verify_pending_limit = cf.integer("address_verify_pending_request_limit", 5000, 1);
    s.clog_warn_time = cf.time("qmgr_clog_warn_time", "300s", 's', 0);
    if (cf.raw("flush_service_name")) s.flush_service_name = cf.str("flush_service_name");
    s.fast_flush_domains = cf.str("fast_flush_domains");
    auto parent = cf.list("parent_domain_matches_subdomains");
    s.flush_parent_style =
        std::find(parent.begin(), parent.end(), "fast_flush_domains") != parent.end();
    s.feedback_debug = cf.boolean("destination_concurrency_feedback_debug", false);
    s.init_dest_concurrency = cf.integer("initial_destination_concurrency", 5, 1);
    return s;
}

core::SchedulerConfig Settings::scheduler() const {
    core::SchedulerConfig c;
    c.message_recipient_limit = static_cast<int>(message_recipient_limit);
    c.message_recipient_minimum = static_cast<int>(message_recipient_minimum);
    c.minimal_backoff_time = static_cast<int>(minimal_backoff_time);
    c.transport_retry_time = static_cast<int>(transport_retry_time);
    c.clog_warn_time = helpful_warnings ? static_cast<int>(clog_warn_time) : 0;
    c.message_active_limit = static_cast<int>(message_active_limit);
    return c;
}

core::TransportConfig Settings::for_transport(const conf::MainCf& cf, const std::string& t) const {
    // The transport-specific name wins when set; its fallback is the global
    // default_* parameter (for local: local_destination_* with 2 and 1).
    auto pick_int = [&](const std::string& suffix, const std::string& fallback, int64_t def,
                        int64_t min, int64_t max = INT32_MAX) {
        int64_t base = cf.integer(fallback, def, min, max);
        std::string name = t + suffix;
        if (name != fallback && cf.raw(name)) return static_cast<int>(cf.integer(name, base, min, max));
        return static_cast<int>(base);
    };
    auto pick_time = [&](const std::string& suffix, const std::string& fallback, const char* def,
                         int64_t min) {
        int64_t base = cf.time(fallback, def, 's', min);
        std::string name = t + suffix;
        if (cf.raw(name)) return static_cast<int>(cf.time(name, std::to_string(base) + "s", 's', min));
        return static_cast<int>(base);
    };
    auto pick_feedback = [&](const std::string& suffix, const std::string& fallback) {
        std::string name = t + suffix;
        std::string def_value = cf.raw(fallback) ? cf.str(fallback) : "1";
        std::string value = cf.raw(name) ? cf.str(name) : def_value;
        // Like stock, messages name the transport's own parameter only when
        // its value differs from the default's.
        std::string shown = value != def_value ? name : fallback;
        // Postfix 3.7 has no sqrt_concurrency form; it warns and uses 1.
        auto fb = core::parse_feedback(value, false);
        if (!fb) {
            log::warn(shown + ": ignoring malformed or unreasonable feedback: " + value);
            fb = core::Feedback{};
        }
        if (feedback_debug)
            log_feedback_setting(t, shown, *fb, static_cast<int>(init_dest_concurrency));
        return *fb;
    };
    bool is_local = t == "local";
    core::TransportConfig c;
    c.dest_concurrency_limit = pick_int("_destination_concurrency_limit",
                                        is_local ? "local_destination_concurrency_limit"
                                                 : "default_destination_concurrency_limit",
                                        is_local ? 2 : 20, 0);
    c.dest_recipient_limit = pick_int("_destination_recipient_limit",
                                      is_local ? "local_destination_recipient_limit"
                                               : "default_destination_recipient_limit",
                                      is_local ? 1 : 50, 0);
    c.init_dest_concurrency =
        pick_int("_initial_destination_concurrency", "initial_destination_concurrency", 5, 1);
    c.fail_cohort_limit = pick_int("_destination_concurrency_failed_cohort_limit",
                                   "default_destination_concurrency_failed_cohort_limit", 1, 0);
    c.pos_feedback = pick_feedback("_destination_concurrency_positive_feedback",
                                   "default_destination_concurrency_positive_feedback");
    c.neg_feedback = pick_feedback("_destination_concurrency_negative_feedback",
                                   "default_destination_concurrency_negative_feedback");
    c.dest_rate_delay = pick_time("_destination_rate_delay", "default_destination_rate_delay", "0s", 0);
    c.transport_rate_delay = pick_time("_transport_rate_delay", "default_transport_rate_delay", "0s", 0);
    c.recipient_limit = pick_int("_recipient_limit", "default_recipient_limit", 20000, 0);
    c.extra_recipient_limit = pick_int("_extra_recipient_limit", "default_extra_recipient_limit", 1000, 0);
    c.refill_limit = pick_int("_recipient_refill_limit", "default_recipient_refill_limit", 100, 1);
    c.refill_delay = pick_time("_recipient_refill_delay", "default_recipient_refill_delay", "5s", 1);
    c.slot_cost = pick_int("_delivery_slot_cost", "default_delivery_slot_cost", 5, 0);
    c.slot_loan = pick_int("_delivery_slot_loan", "default_delivery_slot_loan", 3, 0);
    c.slot_discount = pick_int("_delivery_slot_discount", "default_delivery_slot_discount", 50, 0, 100);
    c.min_slots = pick_int("_minimum_delivery_slots", "default_minimum_delivery_slots", 3, 0);
    return c;
}

} // namespace cqmgr::qmgr
