// Every main.cf parameter the queue manager uses, read once at start-up with
// Postfix 3.7's names and defaults, plus the per-transport overrides
// (`<transport>_destination_concurrency_limit` and friends), read lazily the
// first time a transport is seen.
#pragma once

#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/core/structures.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cqmgr::qmgr {


struct Settings {
    std::string config_dir;
    std::string queue_directory;
    std::string mail_owner;
    std::string syslog_name;
    std::string myhostname;
    std::string hash_queue_names;
    int64_t hash_queue_depth = 1;

    int64_t in_flow_delay = 1;
    int64_t default_process_limit = 100;
    int64_t queue_run_delay = 300;
    int64_t minimal_backoff_time = 300;
    int64_t maximal_backoff_time = 4000;
    int64_t maximal_queue_lifetime = 5 * 86400;
    int64_t bounce_queue_lifetime = 5 * 86400;
    int64_t transport_retry_time = 60;
    int64_t qmgr_ipc_timeout = 60;
    int64_t daemon_timeout = 18000;
    int64_t message_active_limit = 20000;
    int64_t message_recipient_limit = 20000;
    int64_t message_recipient_minimum = 10;

    std::string rewrite_service_name = "rewrite";
    std::string bounce_service_name = "bounce";
    std::string defer_service_name = "defer";
    std::string trace_service_name = "trace";
    std::string default_filter_nexthop;
    std::string double_bounce_sender = "double-bounce";
    std::vector<std::string> defer_transports;
    bool disable_verp_bounces = false;
    bool confirm_delay_cleared = false;
    bool log_internal_form = false; // info_log_address_format = internal
    bool dont_remove = false;       // keep finished files in saved/
    bool smtputf8_enable = false;
    int64_t daemon_watchdog = 1000; // qmgr_daemon_timeout
    bool helpful_warnings = true;
    bool owner_request_special = true;
    int64_t verify_pending_limit = 5000; // address_verify_pending_request_limit
    int64_t clog_warn_time = 300;
    std::string flush_service_name = "flush";
    std::string fast_flush_domains;      // expanded
    bool flush_parent_style = true;      // fast_flush_domains in parent_domain_matches_subdomains
    bool feedback_debug = false;         // destination_concurrency_feedback_debug
    int64_t init_dest_concurrency = 5;   // initial_destination_concurrency (global)

    // Reads everything from `cf`; bad values warn and fall back.
    static Settings load(const conf::MainCf& cf);

    // Per-transport scheduler settings: `<transport>_<suffix>` when set,
    // else the `default_*` parameter (and local's own concurrency and
    // recipient defaults), with Postfix 3.7's defaults and bounds.
    core::TransportConfig for_transport(const conf::MainCf& cf, const std::string& transport) const;
    // The global scheduler settings.
    core::SchedulerConfig scheduler() const;
};


} // namespace cqmgr::qmgr
