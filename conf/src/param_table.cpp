#include "cqmgr/conf/param_table.hpp"

#include "cqmgr/conf/main_cf.hpp"

#include <array>
#include <unistd.h>

namespace cqmgr::conf {

namespace {

using T = ParamType;
constexpr auto All = ParamReader::AllDaemons;
constexpr auto Q = ParamReader::Qmgr;

// Shorthand for one table row.
constexpr ParamSpec P(std::string_view name, ParamType type, std::string_view def, int64_t min,
                      int64_t max, ParamReader reader, bool qmgr_uses, std::string_view note = {},
                      bool computed = false) {
    return ParamSpec{name, type, def, min, max, reader, computed, qmgr_uses, note};
}

// mail_params_init() order: compatibility level, early strings, early
// booleans, SMTPUTF8 switches, host names, other strings, ints, longs,
// booleans, times, then mynetworks.  config_directory comes first: it is
// set from MAIL_CONFIG before main.cf is read.
constexpr auto kGlobal = std::to_array<ParamSpec>({
    P("config_directory", T::String, "/etc/postfix", 0, 0, All, true,
      "where main.cf is read (MAIL_CONFIG)"),
    P("compatibility_level", T::String, "0", 0, 0, All, true,
      "selects the compatibility defaults (smtputf8_enable, relay_domains)"),
    P("mail_version", T::String, "3.7.11", 1, 0, All, false),
    P("syslog_facility", T::String, "mail", 1, 0, All, true, "syslog facility"),
    P("inet_protocols", T::String, "all", 0, 0, All, false),
    P("multi_instance_directories", T::String, "", 0, 0, All, false),
    P("multi_instance_group", T::String, "", 0, 0, All, false),
    P("multi_instance_name", T::String, "", 0, 0, All, false),
    P("maillog_file", T::String, "", 0, 0, All, true, "postlogd mode when set"),
    P("maillog_file_prefixes", T::String, "/var, /dev/stdout", 1, 0, All, true,
      "allowed maillog_file prefixes"),
    P("maillog_file_compressor", T::String, "gzip", 1, 0, All, false),
    P("maillog_file_rotate_suffix", T::String, "%Y%m%d-%H%M%S", 1, 0, All, false),
    P("postlog_service_name", T::String, "postlog", 1, 0, All, true, "postlogd socket"),
    P("dnssec_probe", T::String, "ns:.", 0, 0, All, false),
    P("known_tcp_ports", T::String, "lmtp=24, smtp=25, smtps=submissions=465, submission=587", 0, 0,
      All, false),
    P("daemon_table_open_error_is_fatal", T::Bool, "no", 0, 0, All, false),
    P("dns_ncache_ttl_fix_enable", T::Bool, "no", 0, 0, All, false),
    P("smtputf8_enable", T::Bool, "${{$compatibility_level} <level {1} ? {no} : {yes}}", 0, 0, All,
      true, "smtputf8 request bits"),
    P("enable_idna2003_compatibility", T::Bool, "no", 0, 0, All, false),
    P("respectful_logging", T::Bool, "${{$compatibility_level} <level {3.6} ? {no} : {yes}}", 0, 0,
      All, false),
    P("myhostname", T::String, "", 1, 0, All, true, "filter nexthop fallback; postlog host field",
      true),
    P("mydomain", T::String, "", 1, 0, All, false, {}, true),
    P("mail_name", T::String, "Postfix", 1, 0, All, false),
    P("syslog_name", T::String, "${multi_instance_name?{$multi_instance_name}:{postfix}}", 1, 0,
      All, true, "log tag"),
    P("mail_owner", T::String, "postfix", 1, 0, All, true, "identity taken with -u"),
    P("setgid_group", T::String, "postdrop", 1, 0, All, false),
    P("mydestination", T::String, "$myhostname, localhost.$mydomain, localhost", 0, 0, All, false),
    P("myorigin", T::String, "$myhostname", 1, 0, All, false),
    P("relayhost", T::String, "", 0, 0, All, false),
    P("daemon_directory", T::String, "/usr/lib/postfix/sbin", 1, 0, All, true,
      "master's command path prefix"),
    P("data_directory", T::String, "/var/lib/postfix", 1, 0, All, false),
    P("command_directory", T::String, "/usr/sbin", 1, 0, All, false),
    P("meta_directory", T::String, "/etc/postfix", 1, 0, All, false),
    P("queue_directory", T::String, "/var/spool/postfix", 1, 0, All, true,
      "working directory (and chroot)"),
    P("shlib_directory", T::String, "/usr/lib/postfix", 1, 0, All, false),
    P("process_id_directory", T::String, "pid", 1, 0, All, false),
    P("inet_interfaces", T::String, "all", 0, 0, All, false),
    P("proxy_interfaces", T::String, "", 0, 0, All, false),
    P("double_bounce_sender", T::String, "double-bounce", 1, 0, All, true,
      "discard rule for double bounces"),
    P("default_privs", T::String, "nobody", 1, 0, All, false),
    P("alias_database", T::String, "hash:/etc/aliases", 0, 0, All, false),
    P("mail_release_date", T::String, "20240304", 1, 0, All, false),
    P("default_database_type", T::String, "hash", 1, 0, All, false),
    P("hash_queue_names", T::String, "deferred, defer", 1, 0, All, true,
      "hashed queue directories"),
    P("recipient_delimiter", T::String, "", 0, 0, All, true, "per-recipient queue names"),
    P("relay_domains", T::String, "${{$compatibility_level} <level {2} ? {$mydestination} : {}}", 0,
      0, All, true, "default of fast_flush_domains"),
    P("fast_flush_domains", T::String, "$relay_domains", 0, 0, All, true,
      "flush_add eligibility (empty: off)"),
    P("export_environment", T::String, "TZ MAIL_CONFIG LANG", 0, 0, All, false),
    P("import_environment", T::String,
      "MAIL_CONFIG MAIL_DEBUG MAIL_LOGTAG TZ XAUTHORITY DISPLAY LANG=C POSTLOG_SERVICE "
      "POSTLOG_HOSTNAME",
      0, 0, All, false),
    P("mynetworks_style", T::String, "${{$compatibility_level} <level {2} ? {subnet} : {host}}", 1,
      0, All, false),
    P("debug_peer_list", T::String, "", 0, 0, All, false),
    P("default_verp_delimiters", T::String, "+=", 2, 2, All, false),
    P("verp_delimiter_filter", T::String, "-=+", 1, 0, All, false),
    P("parent_domain_matches_subdomains", T::String,
      "debug_peer_list,fast_flush_domains,mynetworks,permit_mx_backup_networks,qmqpd_authorized_"
      "clients,relay_domains,smtpd_access_maps",
      0, 0, All, false),
    P("alternate_config_directories", T::String, "", 0, 0, All, false),
    P("bounce_service_name", T::String, "bounce", 1, 0, All, true, "bounce socket"),
    P("cleanup_service_name", T::String, "cleanup", 1, 0, All, false),
    P("defer_service_name", T::String, "defer", 1, 0, All, true, "defer socket"),
    P("pickup_service_name", T::String, "pickup", 1, 0, All, false),
    P("queue_service_name", T::String, "qmgr", 1, 0, All, true,
      "what cleanup and postqueue trigger"),
    P("rewrite_service_name", T::String, "rewrite", 1, 0, All, true, "trivial-rewrite socket"),
    P("showq_service_name", T::String, "showq", 1, 0, All, false),
    P("error_service_name", T::String, "error", 1, 0, All, false),
    P("flush_service_name", T::String, "flush", 1, 0, All, true, "flush socket"),
    P("address_verify_service_name", T::String, "verify", 1, 0, All, true, "verify socket"),
    P("trace_service_name", T::String, "trace", 1, 0, All, true, "trace socket"),
    P("proxymap_service_name", T::String, "proxymap", 1, 0, All, false),
    P("proxywrite_service_name", T::String, "proxywrite", 1, 0, All, false),
    P("internal_mail_filter_classes", T::String, "", 0, 0, All, false),
    P("multi_instance_wrapper", T::String, "", 0, 0, All, false),
    P("default_delivery_status_filter", T::String, "", 0, 0, All, false),
    P("smtputf8_autodetect_classes", T::String, "sendmail, verify", 1, 0, All, false),
    P("message_drop_headers", T::String, "bcc, content-length, resent-bcc, return-path", 0, 0, All,
      false),
    P("info_log_address_format", T::String, "external", 1, 0, All, true,
      "address form in log lines"),
    P("default_process_limit", T::Int, "100", 1, 0, All, true, "in-flow token target"),
    P("max_use", T::Int, "100", 1, 0, All, true, "checked, then forced to 0 by qmgr"),
    P("dont_remove", T::Int, "0", 0, 0, All, true, "non-zero: move removed files to saved/"),
    P("line_length_limit", T::Int, "2048", 512, 0, All, false),
    P("hash_queue_depth", T::Int, "1", 1, 0, All, true, "hashed queue directory depth"),
    P("fork_attempts", T::Int, "5", 1, 0, All, false),
    P("deliver_lock_attempts", T::Int, "20", 1, 0, All, false),
    P("debug_peer_level", T::Int, "2", 1, 0, All, false),
    P("fault_injection_code", T::Int, "0", 0, 0, All, false),
    P("berkeley_db_create_buffer_size", T::Int, "16777216", 1, 0, All, false),
    P("berkeley_db_read_buffer_size", T::Int, "131072", 1, 0, All, false),
    P("header_size_limit", T::Int, "102400", 1, 0, All, false),
    P("header_address_token_limit", T::Int, "10240", 1, 0, All, false),
    P("mime_nesting_limit", T::Int, "100", 1, 0, All, false),
    P("mime_boundary_length_limit", T::Int, "2048", 1, 0, All, false),
    P("delay_logging_resolution_limit", T::Int, "2", 0, 6, All, true, "delays= precision"),
    P("tcp_windowsize", T::Int, "0", 0, 0, All, false),
    P("message_size_limit", T::Long, "10240000", 0, 0, All, false),
    P("lmdb_map_size", T::Long, "16777216", 1, 0, All, false),
    P("disable_dns_lookups", T::Bool, "no", 0, 0, All, false),
    P("soft_bounce", T::Bool, "no", 0, 0, All, true, "bounces become deferrals"),
    P("owner_request_special", T::Bool, "yes", 0, 0, All, true, "per-recipient queue names"),
    P("strict_8bitmime", T::Bool, "no", 0, 0, All, false),
    P("strict_7bit_headers", T::Bool, "no", 0, 0, All, false),
    P("strict_8bitmime_body", T::Bool, "no", 0, 0, All, false),
    P("strict_mime_encoding_domain", T::Bool, "no", 0, 0, All, false),
    P("disable_mime_input_processing", T::Bool, "no", 0, 0, All, false),
    P("disable_mime_output_conversion", T::Bool, "no", 0, 0, All, false),
    P("address_verify_negative_cache", T::Bool, "yes", 0, 0, All, true,
      "verify updates on failures"),
    P("backwards_bounce_logfile_compatibility", T::Bool, "yes", 0, 0, All, true,
      "bounce log format"),
    P("helpful_warnings", T::Bool, "yes", 0, 0, All, true, "clog warnings"),
    P("send_cyrus_sasl_authzid", T::Bool, "no", 0, 0, All, false),
    P("multi_instance_enable", T::Bool, "no", 0, 0, All, false),
    P("enable_long_queue_ids", T::Bool, "no", 0, 0, All, true, "queue ID format"),
    P("strict_smtputf8", T::Bool, "no", 0, 0, All, false),
    P("enable_original_recipient", T::Bool, "yes", 0, 0, All, false),
    P("application_event_drain_time", T::Time, "100s", 1, 0, All, false),
    P("max_idle", T::Time, "100s", 1, 0, All, true, "checked, then forced to 0 by qmgr"),
    P("ipc_timeout", T::Time, "3600s", 1, 0, All, true, "replaced by qmgr_ipc_timeout"),
    P("ipc_idle", T::Time, "5s", 1, 0, All, true, "rewrite client idle disconnect"),
    P("ipc_ttl", T::Time, "1000s", 1, 0, All, true, "rewrite client connection lifetime"),
    P("trigger_timeout", T::Time, "10s", 1, 0, All, true, "trigger client timeout"),
    P("fork_delay", T::Time, "1s", 1, 0, All, false),
    P("deliver_lock_delay", T::Time, "1s", 1, 0, All, false),
    P("stale_lock_time", T::Time, "500s", 1, 0, All, false),
    P("daemon_timeout", T::Time, "18000s", 1, 0, All, true, "delivery agent watchdog"),
    P("in_flow_delay", T::Time, "1s", 0, 10, All, true, "in-flow token pacing"),
    P("mynetworks", T::String, "", 0, 0, All, false, {}, true),
    P("service_throttle_time", T::Time, "60s", 1, 0, ParamReader::Master, true,
      "master's restart back-off"),
});

// qmgr's own parameter tables in the order the trigger server reads them:
// int, str, bool, time.
constexpr auto kQmgr = std::to_array<ParamSpec>({
    P("qmgr_message_active_limit", T::Int, "20000", 1, 0, Q, true, "messages in the active queue"),
    P("qmgr_message_recipient_limit", T::Int, "20000", 1, 0, Q, true,
      "in-memory recipients; raised to the active limit"),
    P("qmgr_message_recipient_minimum", T::Int, "10", 1, 0, Q, true,
      "recipients read per message at least"),
    P("default_recipient_limit", T::Int, "20000", 0, 0, Q, true, "per-transport recipient pool"),
    P("default_extra_recipient_limit", T::Int, "1000", 0, 0, Q, true,
      "extra slots for stacked jobs"),
    P("default_recipient_refill_limit", T::Int, "100", 1, 0, Q, true,
      "refill when this many slots are free"),
    P("default_delivery_slot_cost", T::Int, "5", 0, 0, Q, true, "deliveries per preemption slot"),
    P("default_delivery_slot_loan", T::Int, "3", 0, 0, Q, true, "preemption loan"),
    P("default_delivery_slot_discount", T::Int, "50", 0, 100, Q, true, "percent discount on slots"),
    P("default_minimum_delivery_slots", T::Int, "3", 0, 0, Q, true,
      "slots before preemption applies"),
    P("initial_destination_concurrency", T::Int, "5", 1, 0, Q, true, "initial window"),
    P("default_destination_concurrency_limit", T::Int, "20", 0, 0, Q, true,
      "parallel deliveries per destination"),
    P("default_destination_recipient_limit", T::Int, "50", 0, 0, Q, true,
      "recipients per delivery"),
    P("local_destination_recipient_limit", T::Int, "1", 0, 0, Q, true,
      "local transport's own default"),
    P("local_destination_concurrency_limit", T::Int, "2", 0, 0, Q, true,
      "local transport's own default"),
    P("default_destination_concurrency_failed_cohort_limit", T::Int, "1", 0, 0, Q, true,
      "failed cohorts before a destination is dead"),
    P("address_verify_pending_request_limit", T::Int, "5000", 1, 0, Q, true,
      "probe messages in memory"),
    P("defer_transports", T::String, "", 0, 0, Q, true, "transports that defer everything"),
    P("default_destination_concurrency_positive_feedback", T::String, "1", 1, 0, Q, true,
      "window increase per success"),
    P("default_destination_concurrency_negative_feedback", T::String, "1", 1, 0, Q, true,
      "window decrease per failure"),
    P("default_filter_nexthop", T::String, "", 0, 0, Q, true,
      "nexthop for content filters without one"),
    P("disable_verp_bounces", T::Bool, "no", 0, 0, Q, true, "plain instead of VERP bounce flushes"),
    P("destination_concurrency_feedback_debug", T::Bool, "no", 0, 0, Q, true,
      "feedback debug logging"),
    P("confirm_delay_cleared", T::Bool, "no", 0, 0, Q, true,
      "report delivery after a delay warning"),
    P("queue_run_delay", T::Time, "300s", 1, 0, Q, true, "deferred queue scan period"),
    P("minimal_backoff_time", T::Time, "300s", 1, 0, Q, true, "smallest retry delay"),
    P("maximal_backoff_time", T::Time, "4000s", 1, 0, Q, true, "largest retry delay"),
    P("maximal_queue_lifetime", T::Time, "5d", 0, 8640000, Q, true, "expiry of normal mail"),
    P("bounce_queue_lifetime", T::Time, "5d", 0, 8640000, Q, true, "expiry of null-sender mail"),
    P("transport_retry_time", T::Time, "60s", 1, 0, Q, true, "dead transport throttle time"),
    P("qmgr_clog_warn_time", T::Time, "300s", 0, 0, Q, true, "clog warning interval (0: off)"),
    P("default_recipient_refill_delay", T::Time, "5s", 1, 0, Q, true, "refill after this long"),
    P("default_transport_rate_delay", T::Time, "0s", 0, 0, Q, true,
      "pause between deliveries per transport"),
    P("default_destination_rate_delay", T::Time, "0s", 0, 0, Q, true,
      "pause between deliveries per destination"),
    P("qmgr_daemon_timeout", T::Time, "1000s", 1, 0, Q, true, "watchdog"),
    P("qmgr_ipc_timeout", T::Time, "60s", 1, 0, Q, true, "IPC timeout"),
});

// qmgr_transport_create()'s order.
constexpr auto kSuffixes = std::to_array<TransportSuffix>({
    {"_destination_concurrency_limit", "default_destination_concurrency_limit", T::Int, 0, 0},
    {"_destination_recipient_limit", "default_destination_recipient_limit", T::Int, 0, 0},
    {"_initial_destination_concurrency", "initial_destination_concurrency", T::Int, 1, 0},
    {"_transport_rate_delay", "default_transport_rate_delay", T::Time, 0, 0},
    {"_destination_rate_delay", "default_destination_rate_delay", T::Time, 0, 0},
    {"_delivery_slot_cost", "default_delivery_slot_cost", T::Int, 0, 0},
    {"_delivery_slot_loan", "default_delivery_slot_loan", T::Int, 0, 0},
    {"_delivery_slot_discount", "default_delivery_slot_discount", T::Int, 0, 100},
    {"_minimum_delivery_slots", "default_minimum_delivery_slots", T::Int, 0, 0},
    {"_recipient_limit", "default_recipient_limit", T::Int, 0, 0},
    {"_extra_recipient_limit", "default_extra_recipient_limit", T::Int, 0, 0},
    {"_recipient_refill_limit", "default_recipient_refill_limit", T::Int, 1, 0},
    {"_recipient_refill_delay", "default_recipient_refill_delay", T::Time, 1, 0},
    {"_destination_concurrency_positive_feedback",
     "default_destination_concurrency_positive_feedback", T::String, 1, 0},
    {"_destination_concurrency_negative_feedback",
     "default_destination_concurrency_negative_feedback", T::String, 1, 0},
    {"_destination_concurrency_failed_cohort_limit",
     "default_destination_concurrency_failed_cohort_limit", T::Int, 0, 0},
});

} // namespace

std::span<const ParamSpec> global_params() {
    return kGlobal;
}
std::span<const ParamSpec> qmgr_params() {
    return kQmgr;
}
std::span<const TransportSuffix> transport_suffixes() {
    return kSuffixes;
}

const ParamSpec* find_param(std::string_view name) {
    for (auto& p : kGlobal)
        if (p.name == name) return &p;
    for (auto& p : kQmgr)
        if (p.name == name) return &p;
    return nullptr;
}

std::string system_hostname() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) < 0) return "localhost";
    return buf;
}

void register_defaults(MainCf& cf, const std::string& hostname, bool only_missing) {
    auto wanted = [&](std::string_view name) {
        return !only_missing || !cf.is_known(std::string(name));
    };
    for (auto table : {global_params(), qmgr_params()})
        for (auto& p : table)
            if (!p.computed && wanted(p.name))
                cf.set_default(std::string(p.name), std::string(p.def));
    if (!wanted("myhostname") && !wanted("mydomain")) return;
    // myhostname: the host name, made a FQDN with $mydomain (only when
    // main.cf sets it) or "localdomain".
    if (wanted("myhostname"))
        cf.set_default_fn("myhostname", [hostname](const MainCf& c) -> std::optional<std::string> {
            if (hostname.find('.') != std::string::npos) return hostname;
            return hostname + "." + (c.is_set("mydomain") ? c.str("mydomain") : "localdomain");
        });
    // mydomain: what follows the first dot of $myhostname.
    if (wanted("mydomain"))
        cf.set_default_fn("mydomain", [](const MainCf& c) -> std::optional<std::string> {
            std::string host = c.str("myhostname");
            auto dot = host.find('.');
            return dot == std::string::npos ? std::string("localdomain") : host.substr(dot + 1);
        });
}

void register_transport_defaults(MainCf& cf, const std::string& transport) {
    for (auto& s : transport_suffixes()) {
        std::string name = transport + std::string(s.suffix);
        if (cf.is_known(name)) continue;
        // Appended rather than `"$" + std::string(...)`: GCC 12 at -O3 reports
        // that operator+ (an insert at the front) as a -Wrestrict overlap.
        std::string reference = "$";
        reference += s.fallback;
        cf.set_default(name, reference);
    }
}

} // namespace cqmgr::conf
