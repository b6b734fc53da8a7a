// The typed start-up configuration of the queue manager: everything stock
// qmgr(8) reads before it serves its first trigger (docs/postfix-facts.md §9),
// read in Postfix's order with Postfix's syntax, bounds and start-up checks,
// so that a configuration stock qmgr refuses is refused here with the same
// fatal text (ConfigError::postfix_text()), and one it accepts gives the
// same values; then cqmgr's own parameters.  Per-transport values are read
// later: transport_params.hpp.
//
// The parameter table (param_table.hpp) declares each parameter once: its
// type, default, bounds and the member below that it fills.  The members
// hold no defaults of their own; load() fills every one.
#pragma once

#include "cqmgr/conf/main_cf.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace cqmgr::conf {

struct QmgrParams {
    using Value = std::variant<std::string, int64_t, bool>;

    // Every parameter read, by name, as typed by its row (times in seconds,
    // lists as text), before the adjustments below.
    std::map<std::string, Value, std::less<>> values;

    // qmgr's own parameters (docs/compatibility.md, "Parameters").  Times are
    // in seconds.
    int64_t qmgr_message_active_limit{};
    int64_t qmgr_message_recipient_limit{}; // raised to the active limit if smaller
    int64_t qmgr_message_recipient_minimum{};
    int64_t default_recipient_limit{};
    int64_t default_extra_recipient_limit{};
    int64_t default_recipient_refill_limit{};
    int64_t default_recipient_refill_delay{};
    int64_t default_delivery_slot_cost{};
    int64_t default_delivery_slot_loan{};
    int64_t default_delivery_slot_discount{};
    int64_t default_minimum_delivery_slots{};
    int64_t initial_destination_concurrency{};
    int64_t default_destination_concurrency_limit{};
    int64_t default_destination_recipient_limit{};
    int64_t local_destination_concurrency_limit{};
    int64_t local_destination_recipient_limit{};
    int64_t default_destination_concurrency_failed_cohort_limit{};
    std::string default_destination_concurrency_positive_feedback; // parsed per transport
    std::string default_destination_concurrency_negative_feedback;
    bool destination_concurrency_feedback_debug{};
    int64_t default_destination_rate_delay{};
    int64_t default_transport_rate_delay{};
    int64_t queue_run_delay{};
    int64_t minimal_backoff_time{};
    int64_t maximal_backoff_time{};
    int64_t maximal_queue_lifetime{};
    int64_t bounce_queue_lifetime{}; // lowered to maximal_queue_lifetime if larger
    int64_t transport_retry_time{};
    int64_t qmgr_clog_warn_time{};
    int64_t qmgr_daemon_timeout{};
    int64_t qmgr_ipc_timeout{};
    std::vector<std::string> defer_transports;
    std::string default_filter_nexthop;
    int64_t address_verify_pending_request_limit{};
    bool disable_verp_bounces{};
    bool confirm_delay_cleared{};

    // Global parameters that change what qmgr does (docs/postfix-facts.md §9.2).
    std::string config_directory;
    std::string compatibility_level;
    std::string queue_directory;
    std::string daemon_directory;
    std::string mail_owner;
    std::string myorigin; // after reading it from a file (see Options)
    std::vector<std::string> hash_queue_names;
    int64_t hash_queue_depth{};
    bool enable_long_queue_ids{};
    int64_t dont_remove{};
    std::string myhostname;
    std::string double_bounce_sender;
    std::string recipient_delimiter;
    bool owner_request_special{};
    bool smtputf8_enable{};
    bool helpful_warnings{};
    int64_t in_flow_delay{};
    int64_t default_process_limit{};
    int64_t daemon_timeout{};
    int64_t ipc_timeout{}; // qmgr replaces ipc_timeout with qmgr_ipc_timeout
    int64_t ipc_idle{};
    int64_t ipc_ttl{};
    int64_t max_idle = 0; // qmgr forces 0 (after checking the configured value)
    // max_idle as configured (main.cf, -o, -i; 100 s by default): the
    // control socket's limit on a client's wait between requests.
    int64_t configured_max_idle{};
    int64_t max_use = 0; // qmgr forces 0 (after checking the configured value)
    std::string rewrite_service_name;
    std::string bounce_service_name;
    std::string defer_service_name;
    std::string trace_service_name;
    std::string address_verify_service_name;
    std::string flush_service_name;
    std::string queue_service_name;
    std::string relay_domains;
    std::string fast_flush_domains;
    std::vector<std::string> parent_domain_matches_subdomains;
    bool soft_bounce{};
    bool address_verify_negative_cache{};
    int64_t delay_logging_resolution_limit{};
    std::string info_log_address_format;
    std::string syslog_name;
    std::string syslog_facility;
    std::string maillog_file;
    std::string maillog_file_prefixes;
    std::string postlog_service_name;
    int64_t trigger_timeout{};
    bool backwards_bounce_logfile_compatibility{};
    // Not used by stock qmgr: cqmgr keeps the control socket's suspensions
    // and throttles there (docs/control-protocol.md).
    std::string data_directory;

    // cqmgr's own parameters (unknown to Postfix and postconf; every one is
    // off or neutral by default).
    // The control socket (docs/control-protocol.md): relative to
    // queue_directory unless absolute; empty turns it off.
    std::string cqmgr_control_socket;

    // The /metrics endpoint: PORT, IPv4:PORT or [IPv6]:PORT; empty = off.
    std::string cqmgr_metrics_listen;
    // Destinations with metric series of their own; the rest are summed.
    int64_t cqmgr_metrics_destination_limit{};
    // /healthz answers 503 once the event loop has not turned for this
    // long (seconds).
    int64_t cqmgr_health_stall_time{};
    // The destination state store (docs/admin-guide.md): an LMDB file,
    // relative to queue_directory unless absolute; empty turns it off.
    // By default $data_directory/cqmgr-state.lmdb.
    std::string cqmgr_state_database;
    // Adaptive limits from the receivers' replies (docs/admin-guide.md):
    // the transports that learn them (a list like defer_transports; empty =
    // off), the admin's reply rules (a pcre: or regexp: table; empty = the
    // default rules only), and the policy's knobs.
    std::vector<std::string> cqmgr_adaptive_limit_transports;
    std::string cqmgr_adaptive_reply_rules;
    int64_t cqmgr_adaptive_probe_deliveries{};
    int64_t cqmgr_adaptive_probe_time{};
    int64_t cqmgr_adaptive_forget_time{};
    int64_t cqmgr_adaptive_rate_margin{};  // percent
    std::string cqmgr_adaptive_rate_model; // pace or window
    int64_t cqmgr_adaptive_rate_window{};  // seconds
    // What one learned limit covers: "destination" (each queue learns its
    // own) or "provider" (the members of a provider on a transport learn
    // one limit together, held across them by the providers' gate).
    std::string cqmgr_adaptive_limit_scope;
    // Reply rules that act (docs/admin-guide.md): a pcre: or regexp:
    // table whose results are actions (suspend, throttle, rate, backoff,
    // warn) with a scope, a threshold and a duration; empty = off.
    std::string cqmgr_reply_actions;
    // The limit sets that their `backoff PROFILE` names: tables from a
    // profile's name to `[concurrency=N] [rate=N/PERIOD]`.
    std::vector<std::string> cqmgr_backoff_profiles;
    // Retry jitter: each deferral's backoff moves by a random offset within
    // this percentage of it (0 = off, as stock).
    int64_t cqmgr_backoff_jitter{};
    // Shared state across a cluster, on Redis (docs/admin-guide.md): the
    // server (host:port, [ipv6]:port or unix:/path; empty = off), the
    // prefix of every key, the deadline of each command (milliseconds),
    // and how long a concurrency lease lasts unless renewed (seconds).
    std::string cqmgr_redis_server;
    std::string cqmgr_redis_key_prefix;
    int64_t cqmgr_redis_timeout_ms{};
    int64_t cqmgr_cluster_lease_time{};
    // Lookup tables ("type:name"), keyed by transport:destination,
    // destination or transport: rates N/period[,burst], and cluster-wide
    // concurrency limits (counts).
    std::vector<std::string> cqmgr_rate_limits;
    std::vector<std::string> cqmgr_cluster_concurrency_limits;
    // Providers (docs/admin-guide.md): lookup tables from a recipient
    // domain, or an MX host name and its parent suffixes, to a provider
    // name; and the providers' limits across all their destinations,
    // tables keyed by transport:provider, then provider (a count, or
    // N/period[,burst]).
    std::vector<std::string> cqmgr_provider_maps;
    std::vector<std::string> cqmgr_provider_concurrency_limits;
    std::vector<std::string> cqmgr_provider_rate_limits;
    // Providers with metric series of their own (the rest are "other").
    int64_t cqmgr_metrics_provider_limit{};
    // The recovery ramp: deferred mail moves into the active queue at no
    // more than this many messages per second per destination; 0 = off.
    int64_t cqmgr_recovery_rate{};
    // The dead backlog (docs/admin-guide.md): a due deferred message that
    // cqmgr deferred itself and whose destinations are all still dead
    // waits another backoff in deferred instead of being taken.
    bool cqmgr_dead_backlog{};
    // The due index (docs/admin-guide.md): the periodic deferred pass
    // takes the files that are due from an index ordered by time, and
    // lists only the directories that changed, instead of looking at every
    // file; a full pass at start-up, on a D trigger and once an hour.
    bool cqmgr_deferred_due_index{};
    // The resolve cache (docs/admin-guide.md): answers of trivial-rewrite
    // kept for 30 s, up to this many, and shared by the recipients of a
    // domain where the configuration allows; 0 keeps only the last answer,
    // as stock does.
    int64_t cqmgr_resolve_cache_limit{};
    // Priority lanes (docs/admin-guide.md): the tables that give a message
    // its class (urgent, normal or bulk) from its sender and recipient
    // domains, and from its header lines; the percentage of each
    // transport's process limit kept for urgent mail, and the percentage
    // of the deliveries in flight that other mail keeps while urgent mail
    // waits.  With no table set,
    // every message is normal and nothing changes.
    std::vector<std::string> cqmgr_priority_maps;
    std::vector<std::string> cqmgr_priority_header_maps;
    int64_t cqmgr_urgent_agent_share{};
    int64_t cqmgr_bulk_agent_share{};
    // Sender limits (docs/admin-guide.md): the tables that give a message
    // a sender group, and the group its concurrency and rate per
    // destination, from its sender address or domain, else from the class
    // its header lines give (cqmgr_sender_class_header_maps).  With no
    // table set, no message has a group and nothing changes.
    std::vector<std::string> cqmgr_sender_limits;
    std::vector<std::string> cqmgr_sender_class_header_maps;
    // Slow-destination isolation (docs/admin-guide.md): the percentage of
    // a transport's process limit that one destination may have in flight
    // (per transport: <transport>_cqmgr_destination_agent_share); 0 = off.
    // `destination_shares` is true when it or any transport's is above 0.
    int64_t cqmgr_destination_agent_share{};
    bool destination_shares = false;
    // The job selection policy (rak or finch) of every transport without a
    // <transport>_cqmgr_scheduler_policy of its own, and whether any
    // transport's policy is finch.
    std::string cqmgr_scheduler_policy;
    bool finch_policy_used = false;
    // The name servers of the MX lookups that group destinations into
    // providers (docs/admin-guide.md): IPv4[:PORT] or [IPv6][:PORT] each;
    // empty = /etc/resolv.conf's.
    std::vector<std::string> cqmgr_dns_servers;
    // Each transport's process limit (master.cf maxproc, "-" resolved),
    // for the lanes' and the destinations' shares and the finch policy's:
    // filled by the daemon from master.cf before its jail, only when a
    // priority table or a destination share is set or a transport's policy
    // is finch.
    std::map<std::string, int64_t> transport_process_limits;
    // True when a priority table is set (lanes are on).
    bool lanes() const {
        return !cqmgr_priority_maps.empty() || !cqmgr_priority_header_maps.empty();
    }

    struct Options {
        // Check mail_owner, default_privs and setgid_group against the
        // password and group files as Postfix does (unit tests turn it off).
        bool check_accounts = true;
        // Debian builds Postfix with MYORIGIN_FROM_FILE: a myorigin value
        // that starts with '/' names a file whose first line is the value.
        bool myorigin_from_file = true;
    };

    // Reads everything from `cf` (which should have register_defaults()
    // applied, and -o overrides set).  Throws ConfigError where stock qmgr
    // stops; `warn` receives the warnings stock qmgr logs at start-up
    // (limits it adjusts).
    static QmgrParams load(const MainCf& cf, const MainCf::Warn& warn = {});
    static QmgrParams load(const MainCf& cf, const MainCf::Warn& warn, Options options);
};

} // namespace cqmgr::conf
