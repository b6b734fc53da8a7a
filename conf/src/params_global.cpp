// The parameters every Postfix daemon reads at start-up (mail_params_init),
// with their Postfix 3.7.11 defaults and bounds, and the QmgrParams member
// each fills when qmgr uses it.
#include "param_rows.hpp"

namespace cqmgr::conf {

namespace {

using namespace rows;

// mail_params_init() order: compatibility level, early strings, early
// booleans, SMTPUTF8 switches, host names, other strings, ints, longs,
// booleans, times, then mynetworks.  config_directory comes first: it is
// set from MAIL_CONFIG before main.cf is read.  max_idle as configured is
// kept for the control socket (qmgr itself forces it to 0).
constexpr auto kGlobal = std::to_array<ParamSpec>({
    P("config_directory", T::String, "/etc/postfix", 0, 0, All, true,
      "where main.cf is read (MAIL_CONFIG)")
        .to(&Q::config_directory),
    P("compatibility_level", T::String, "0", 0, 0, All, true,
      "selects the compatibility defaults (smtputf8_enable, relay_domains)")
        .to(&Q::compatibility_level),
    P("mail_version", T::String, "3.7.11", 1, 0, All, false),
    P("syslog_facility", T::String, "mail", 1, 0, All, true, "syslog facility")
        .to(&Q::syslog_facility),
    P("inet_protocols", T::String, "all", 0, 0, All, false),
    P("multi_instance_directories", T::String, "", 0, 0, All, false),
    P("multi_instance_group", T::String, "", 0, 0, All, false),
    P("multi_instance_name", T::String, "", 0, 0, All, false),
    P("maillog_file", T::String, "", 0, 0, All, true, "postlogd mode when set")
        .to(&Q::maillog_file),
    P("maillog_file_prefixes", T::String, "/var, /dev/stdout", 1, 0, All, true,
      "allowed maillog_file prefixes")
        .to(&Q::maillog_file_prefixes),
    P("maillog_file_compressor", T::String, "gzip", 1, 0, All, false),
    P("maillog_file_rotate_suffix", T::String, "%Y%m%d-%H%M%S", 1, 0, All, false),
    P("postlog_service_name", T::String, "postlog", 1, 0, All, true, "postlogd socket")
        .to(&Q::postlog_service_name),
    P("dnssec_probe", T::String, "ns:.", 0, 0, All, false),
    P("known_tcp_ports", T::String, "lmtp=24, smtp=25, smtps=submissions=465, submission=587", 0, 0,
      All, false),
    P("daemon_table_open_error_is_fatal", T::Bool, "no", 0, 0, All, false),
    P("dns_ncache_ttl_fix_enable", T::Bool, "no", 0, 0, All, false),
    P("smtputf8_enable", T::Bool, "${{$compatibility_level} <level {1} ? {no} : {yes}}", 0, 0, All,
      true, "smtputf8 request bits")
        .to(&Q::smtputf8_enable),
    P("enable_idna2003_compatibility", T::Bool, "no", 0, 0, All, false),
    P("respectful_logging", T::Bool, "${{$compatibility_level} <level {3.6} ? {no} : {yes}}", 0, 0,
      All, false),
    P("myhostname", T::String, "", 1, 0, All, true, "filter nexthop fallback; postlog host field",
      true)
        .to(&Q::myhostname),
    P("mydomain", T::String, "", 1, 0, All, false, {}, true),
    P("mail_name", T::String, "Postfix", 1, 0, All, false),
    P("syslog_name", T::String, "${multi_instance_name?{$multi_instance_name}:{postfix}}", 1, 0,
      All, true, "log tag")
        .to(&Q::syslog_name),
    P("mail_owner", T::String, "postfix", 1, 0, All, true, "identity taken with -u")
        .to(&Q::mail_owner),
    P("setgid_group", T::String, "postdrop", 1, 0, All, false),
    P("mydestination", T::String, "$myhostname, localhost.$mydomain, localhost", 0, 0, All, false),
    P("myorigin", T::String, "$myhostname", 1, 0, All, false).to(&Q::myorigin),
    P("relayhost", T::String, "", 0, 0, All, false),
    P("daemon_directory", T::String, "/usr/lib/postfix/sbin", 1, 0, All, true,
      "master's command path prefix")
        .to(&Q::daemon_directory),
    P("data_directory", T::String, "/var/lib/postfix", 1, 0, All, false).to(&Q::data_directory),
    P("command_directory", T::String, "/usr/sbin", 1, 0, All, false),
    P("meta_directory", T::String, "/etc/postfix", 1, 0, All, false),
    P("queue_directory", T::String, "/var/spool/postfix", 1, 0, All, true,
      "working directory (and chroot)")
        .to(&Q::queue_directory),
    P("shlib_directory", T::String, "/usr/lib/postfix", 1, 0, All, false),
    P("process_id_directory", T::String, "pid", 1, 0, All, false),
    P("inet_interfaces", T::String, "all", 0, 0, All, false),
    P("proxy_interfaces", T::String, "", 0, 0, All, false),
    P("double_bounce_sender", T::String, "double-bounce", 1, 0, All, true,
      "discard rule for double bounces")
        .to(&Q::double_bounce_sender),
    P("default_privs", T::String, "nobody", 1, 0, All, false),
    P("alias_database", T::String, "hash:/etc/aliases", 0, 0, All, false),
    P("mail_release_date", T::String, "20240304", 1, 0, All, false),
    P("default_database_type", T::String, "hash", 1, 0, All, false),
    P("hash_queue_names", T::String, "deferred, defer", 1, 0, All, true, "hashed queue directories")
        .to(&Q::hash_queue_names),
    P("recipient_delimiter", T::String, "", 0, 0, All, true, "per-recipient queue names")
        .to(&Q::recipient_delimiter),
    P("relay_domains", T::String, "${{$compatibility_level} <level {2} ? {$mydestination} : {}}", 0,
      0, All, true, "default of fast_flush_domains")
        .to(&Q::relay_domains),
    P("fast_flush_domains", T::String, "$relay_domains", 0, 0, All, true,
      "flush_add eligibility (empty: off)")
        .to(&Q::fast_flush_domains),
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
      0, 0, All, false)
        .to(&Q::parent_domain_matches_subdomains),
    P("alternate_config_directories", T::String, "", 0, 0, All, false),
    P("bounce_service_name", T::String, "bounce", 1, 0, All, true, "bounce socket")
        .to(&Q::bounce_service_name),
    P("cleanup_service_name", T::String, "cleanup", 1, 0, All, false),
    P("defer_service_name", T::String, "defer", 1, 0, All, true, "defer socket")
        .to(&Q::defer_service_name),
    P("pickup_service_name", T::String, "pickup", 1, 0, All, false),
    P("queue_service_name", T::String, "qmgr", 1, 0, All, true,
      "what cleanup and postqueue trigger")
        .to(&Q::queue_service_name),
    P("rewrite_service_name", T::String, "rewrite", 1, 0, All, true, "trivial-rewrite socket")
        .to(&Q::rewrite_service_name),
    P("showq_service_name", T::String, "showq", 1, 0, All, false),
    P("error_service_name", T::String, "error", 1, 0, All, false),
    P("flush_service_name", T::String, "flush", 1, 0, All, true, "flush socket")
        .to(&Q::flush_service_name),
    P("address_verify_service_name", T::String, "verify", 1, 0, All, true, "verify socket")
        .to(&Q::address_verify_service_name),
    P("trace_service_name", T::String, "trace", 1, 0, All, true, "trace socket")
        .to(&Q::trace_service_name),
    P("proxymap_service_name", T::String, "proxymap", 1, 0, All, false),
    P("proxywrite_service_name", T::String, "proxywrite", 1, 0, All, false),
    P("internal_mail_filter_classes", T::String, "", 0, 0, All, false),
    P("multi_instance_wrapper", T::String, "", 0, 0, All, false),
    P("default_delivery_status_filter", T::String, "", 0, 0, All, false),
    P("smtputf8_autodetect_classes", T::String, "sendmail, verify", 1, 0, All, false),
    P("message_drop_headers", T::String, "bcc, content-length, resent-bcc, return-path", 0, 0, All,
      false),
    P("info_log_address_format", T::String, "external", 1, 0, All, true,
      "address form in log lines")
        .to(&Q::info_log_address_format),
    P("default_process_limit", T::Int, "100", 1, 0, All, true, "in-flow token target")
        .to(&Q::default_process_limit),
    P("max_use", T::Int, "100", 1, 0, All, true, "checked, then forced to 0 by qmgr")
        .to(&Q::max_use),
    P("dont_remove", T::Int, "0", 0, 0, All, true, "non-zero: move removed files to saved/")
        .to(&Q::dont_remove),
    P("line_length_limit", T::Int, "2048", 512, 0, All, false),
    P("hash_queue_depth", T::Int, "1", 1, 0, All, true, "hashed queue directory depth")
        .to(&Q::hash_queue_depth),
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
    P("delay_logging_resolution_limit", T::Int, "2", 0, 6, All, true, "delays= precision")
        .to(&Q::delay_logging_resolution_limit),
    P("tcp_windowsize", T::Int, "0", 0, 0, All, false),
    P("message_size_limit", T::Long, "10240000", 0, 0, All, false),
    P("lmdb_map_size", T::Long, "16777216", 1, 0, All, false),
    P("disable_dns_lookups", T::Bool, "no", 0, 0, All, false),
    P("soft_bounce", T::Bool, "no", 0, 0, All, true, "bounces become deferrals")
        .to(&Q::soft_bounce),
    P("owner_request_special", T::Bool, "yes", 0, 0, All, true, "per-recipient queue names")
        .to(&Q::owner_request_special),
    P("strict_8bitmime", T::Bool, "no", 0, 0, All, false),
    P("strict_7bit_headers", T::Bool, "no", 0, 0, All, false),
    P("strict_8bitmime_body", T::Bool, "no", 0, 0, All, false),
    P("strict_mime_encoding_domain", T::Bool, "no", 0, 0, All, false),
    P("disable_mime_input_processing", T::Bool, "no", 0, 0, All, false),
    P("disable_mime_output_conversion", T::Bool, "no", 0, 0, All, false),
    P("address_verify_negative_cache", T::Bool, "yes", 0, 0, All, true,
      "verify updates on failures")
        .to(&Q::address_verify_negative_cache),
    P("backwards_bounce_logfile_compatibility", T::Bool, "yes", 0, 0, All, true,
      "bounce log format")
        .to(&Q::backwards_bounce_logfile_compatibility),
    P("helpful_warnings", T::Bool, "yes", 0, 0, All, true, "clog warnings")
        .to(&Q::helpful_warnings),
    P("send_cyrus_sasl_authzid", T::Bool, "no", 0, 0, All, false),
    P("multi_instance_enable", T::Bool, "no", 0, 0, All, false),
    P("enable_long_queue_ids", T::Bool, "no", 0, 0, All, true, "queue ID format")
        .to(&Q::enable_long_queue_ids),
    P("strict_smtputf8", T::Bool, "no", 0, 0, All, false),
    P("enable_original_recipient", T::Bool, "yes", 0, 0, All, false),
    P("application_event_drain_time", T::Time, "100s", 1, 0, All, false),
    P("max_idle", T::Time, "100s", 1, 0, All, true, "checked, then forced to 0 by qmgr")
        .to(&Q::configured_max_idle),
    P("ipc_timeout", T::Time, "3600s", 1, 0, All, true, "replaced by qmgr_ipc_timeout")
        .to(&Q::ipc_timeout),
    P("ipc_idle", T::Time, "5s", 1, 0, All, true, "rewrite client idle disconnect")
        .to(&Q::ipc_idle),
    P("ipc_ttl", T::Time, "1000s", 1, 0, All, true, "rewrite client connection lifetime")
        .to(&Q::ipc_ttl),
    P("trigger_timeout", T::Time, "10s", 1, 0, All, true, "trigger client timeout")
        .to(&Q::trigger_timeout),
    P("fork_delay", T::Time, "1s", 1, 0, All, false),
    P("deliver_lock_delay", T::Time, "1s", 1, 0, All, false),
    P("stale_lock_time", T::Time, "500s", 1, 0, All, false),
    P("daemon_timeout", T::Time, "18000s", 1, 0, All, true, "delivery agent watchdog")
        .to(&Q::daemon_timeout),
    P("in_flow_delay", T::Time, "1s", 0, 10, All, true, "in-flow token pacing")
        .to(&Q::in_flow_delay),
    P("mynetworks", T::String, "", 0, 0, All, false, {}, true),
    P("service_throttle_time", T::Time, "60s", 1, 0, ParamReader::Master, true,
      "master's restart back-off"),
});

static_assert(rows::all_fit(kGlobal));

} // namespace

std::span<const ParamSpec> global_params() {
    return kGlobal;
}

} // namespace cqmgr::conf
