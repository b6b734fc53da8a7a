// cqmgr's own parameters (docs/admin-guide.md, cqmgr(8)), read after
// stock's: every one is off or neutral by default.  Postfix does not know
// them, so their defaults are not registered with main.cf's reader.
#include "cqmgr/conf/scheduler_policy.hpp"
#include "cqmgr/control/socket.hpp"
#include "param_rows.hpp"

#include <cctype>

namespace cqmgr::conf {

namespace {

using namespace rows;
using TP = TransportParams;

// True for a listen address of the metrics endpoint
// (qmgr/src/observe/metrics_listen.hpp): PORT, IPv4:PORT or [IPv6]:PORT,
// the port from 1 to 65535.
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

// Stops on a metrics listen address that is set and not one (in the words
// Postfix uses for a bad value in main.cf).
void check_listen_address(const MainCf& cf, const std::string& name, const std::string& value) {
    if (value.empty() || listen_address_ok(value)) return;
    throw ConfigError(cf.where(name), "file " + cf.str("config_directory") +
                                          "/main.cf: parameter " + name + ": bad value: \"" +
                                          value + "\" (expected PORT, IPv4:PORT or [IPv6]:PORT)");
}

// Stops on a cqmgr_dns_servers word that is not IPv4[:PORT] or
// [IPv6][:PORT] (a name server must be an address: there is no resolver
// to look a name up with yet).
void check_dns_servers(const MainCf& cf, const std::string& name, const std::string& value) {
    size_t start = 0;
    while ((start = value.find_first_not_of(", \t\r\n", start)) != std::string::npos) {
        size_t end = value.find_first_of(", \t\r\n", start);
        std::string word = value.substr(start, end - start);
        start = end;
        // An address without a port is checked as one with port 53.
        bool bracketed = word.size() > 2 && word.front() == '[' && word.back() == ']';
        bool bare = bracketed || word.find(':') == std::string::npos;
        if (listen_address_ok(bare ? word + ":53" : word)) continue;
        throw ConfigError(cf.where(name), "file " + cf.str("config_directory") +
                                              "/main.cf: parameter " + name + ": bad value: \"" +
                                              word + "\" (expected IPv4[:PORT] or [IPv6][:PORT])");
    }
}

constexpr char kDestination[] = "destination";
constexpr char kProvider[] = "provider";
constexpr char kPace[] = "pace";
constexpr char kWindow[] = "window";

// Stops on a value that is neither word `A` nor word `B` (such as
// cqmgr_adaptive_limit_scope's "destination" or "provider"), as a bad
// number does.
template <const char* A, const char* B>
void check_either(const MainCf& cf, const std::string& name, const std::string& value) {
    if (value != A && value != B)
        throw ConfigError(cf.where(name), "invalid " + name + " parameter value \"" + value +
                                              "\" (expected " + A + " or " + B + ")");
}

constexpr auto kCqmgr = std::to_array<ParamSpec>({
    C("cqmgr_control_socket", T::String, control::default_socket_path, 0, 0,
      "the control socket; empty: off")
        .to(&Q::cqmgr_control_socket),
    C("cqmgr_metrics_listen", T::String, "", 0, 0, "the /metrics endpoint; empty: off")
        .to(&Q::cqmgr_metrics_listen)
        .checked(check_listen_address),
    C("cqmgr_metrics_destination_limit", T::Int, "50", 0, 0,
      "destinations with metric series of their own")
        .to(&Q::cqmgr_metrics_destination_limit),
    C("cqmgr_health_stall_time", T::Time, "10s", 1, 0,
      "how long the event loop may not turn before /healthz fails")
        .to(&Q::cqmgr_health_stall_time),
    C("cqmgr_adaptive_limit_transports", T::String, "", 0, 0,
      "transports that learn limits from replies")
        .to(&Q::cqmgr_adaptive_limit_transports),
    C("cqmgr_adaptive_reply_rules", T::String, "", 0, 0, "the admin's reply rules")
        .to(&Q::cqmgr_adaptive_reply_rules),
    C("cqmgr_adaptive_probe_deliveries", T::Int, "500", 0, 0, "deliveries before a probe")
        .to(&Q::cqmgr_adaptive_probe_deliveries),
    C("cqmgr_adaptive_probe_time", T::Time, "300s", 0, 0, "time before a probe")
        .to(&Q::cqmgr_adaptive_probe_time),
    C("cqmgr_adaptive_forget_time", T::Time, "3600s", 1, 0, "a learned limit's lifetime")
        .to(&Q::cqmgr_adaptive_forget_time),
    C("cqmgr_adaptive_rate_margin", T::Int, "10", 0, 99, "percent kept below a learned rate")
        .to(&Q::cqmgr_adaptive_rate_margin),
    C("cqmgr_adaptive_rate_model", T::String, "pace", 0, 0,
      "what a rate limit teaches: pace or window")
        .to(&Q::cqmgr_adaptive_rate_model)
        .checked(check_either<kPace, kWindow>),
    C("cqmgr_adaptive_rate_window", T::Time, "60s", 1, 0, "the receivers' rate window")
        .to(&Q::cqmgr_adaptive_rate_window),
    C("cqmgr_adaptive_limit_scope", T::String, "destination", 0, 0,
      "what a learned limit covers: destination or provider")
        .to(&Q::cqmgr_adaptive_limit_scope)
        .checked(check_either<kDestination, kProvider>),
    C("cqmgr_reply_actions", T::String, "", 0, 0, "reply rules that act; empty: off")
        .to(&Q::cqmgr_reply_actions),
    C("cqmgr_backoff_profiles", T::String, "", 0, 0, "tables of the reply rules' backoff limits")
        .tables(&Q::cqmgr_backoff_profiles),
    C("cqmgr_backoff_jitter", T::Int, "0", 0, 100, "percent of random retry offset")
        .to(&Q::cqmgr_backoff_jitter),
    C("cqmgr_state_database", T::String, "$data_directory/cqmgr-state.lmdb", 0, 0,
      "the destination state store; empty: off")
        .to(&Q::cqmgr_state_database),
    C("cqmgr_redis_server", T::String, "", 0, 0, "cluster state on Redis; empty: off")
        .to(&Q::cqmgr_redis_server),
    C("cqmgr_redis_key_prefix", T::String, "cqmgr:", 0, 0, "prefix of every Redis key")
        .to(&Q::cqmgr_redis_key_prefix),
    C("cqmgr_redis_timeout_ms", T::Int, "100", 1, 0, "deadline of a Redis command (ms)")
        .to(&Q::cqmgr_redis_timeout_ms),
    C("cqmgr_cluster_lease_time", T::Time, "30s", 3, 0, "a concurrency lease's lifetime")
        .to(&Q::cqmgr_cluster_lease_time),
    C("cqmgr_rate_limits", T::String, "", 0, 0, "tables of delivery rates")
        .tables(&Q::cqmgr_rate_limits),
    C("cqmgr_cluster_concurrency_limits", T::String, "", 0, 0,
      "tables of cluster-wide concurrency limits")
        .tables(&Q::cqmgr_cluster_concurrency_limits),
    C("cqmgr_provider_maps", T::String, "", 0, 0, "tables of providers by domain or MX host")
        .tables(&Q::cqmgr_provider_maps),
    C("cqmgr_provider_concurrency_limits", T::String, "", 0, 0,
      "tables of concurrency limits per provider")
        .tables(&Q::cqmgr_provider_concurrency_limits),
    C("cqmgr_provider_rate_limits", T::String, "", 0, 0, "tables of delivery rates per provider")
        .tables(&Q::cqmgr_provider_rate_limits),
    C("cqmgr_metrics_provider_limit", T::Int, "20", 0, 0,
      "providers with metric series of their own")
        .to(&Q::cqmgr_metrics_provider_limit),
    C("cqmgr_recovery_rate", T::Int, "0", 0, 0, "deferred messages per second per destination")
        .to(&Q::cqmgr_recovery_rate),
    C("cqmgr_dead_backlog", T::Bool, "no", 0, 0, "leave mail for dead destinations in deferred")
        .to(&Q::cqmgr_dead_backlog),
    C("cqmgr_deferred_due_index", T::Bool, "no", 0, 0, "scan deferred by an index of due times")
        .to(&Q::cqmgr_deferred_due_index),
    C("cqmgr_resolve_cache_limit", T::Int, "0", 0, 0, "trivial-rewrite answers kept")
        .to(&Q::cqmgr_resolve_cache_limit),
    C("cqmgr_priority_maps", T::String, "", 0, 0, "tables of priority classes by domain")
        .tables(&Q::cqmgr_priority_maps),
    C("cqmgr_priority_header_maps", T::String, "", 0, 0, "tables of priority classes by header")
        .tables(&Q::cqmgr_priority_header_maps),
    C("cqmgr_sender_limits", T::String, "", 0, 0, "tables of limits by sender address or domain")
        .tables(&Q::cqmgr_sender_limits),
    C("cqmgr_sender_class_header_maps", T::String, "", 0, 0, "tables of sender classes by header")
        .tables(&Q::cqmgr_sender_class_header_maps),
    C("cqmgr_urgent_agent_share", T::Int, "0", 0, 100, "percent of agents kept for urgent mail")
        .to(&Q::cqmgr_urgent_agent_share),
    C("cqmgr_bulk_agent_share", T::Int, "10", 0, 100,
      "percent of agents other mail keeps while urgent mail waits")
        .to(&Q::cqmgr_bulk_agent_share),
    C("cqmgr_destination_agent_share", T::Percent, "0", 0, 100,
      "percent of agents one destination may have")
        .to(&Q::cqmgr_destination_agent_share),
    C("cqmgr_scheduler_policy", T::String, "rak", 0, 0, "job selection policy: rak or finch")
        .to(&Q::cqmgr_scheduler_policy)
        .checked(check_scheduler_policy),
    C("cqmgr_dns_servers", T::String, "", 0, 0, "name servers of MX lookups; empty: resolv.conf")
        .to(&Q::cqmgr_dns_servers)
        .checked(check_dns_servers),
});

static_assert(rows::all_fit(kCqmgr));

// Read per transport after stock's suffixes.  Unlike the global, a
// transport's urgent share has Postfix's bounds (0 is no minimum).
constexpr auto kSuffixes = std::to_array<TransportSuffix>({
    S(kCqmgr, "_cqmgr_urgent_agent_share", "cqmgr_urgent_agent_share",
      {.number = &TP::cqmgr_urgent_agent_share}),
    S(kCqmgr, "_cqmgr_destination_agent_share", "cqmgr_destination_agent_share",
      {.number = &TP::cqmgr_destination_agent_share}),
    S(kCqmgr, "_cqmgr_scheduler_policy", "cqmgr_scheduler_policy",
      {.text = &TP::cqmgr_scheduler_policy}),
});

static_assert(rows::all_suffixes_fit(kSuffixes));

} // namespace

std::span<const ParamSpec> cqmgr_params() {
    return kCqmgr;
}

std::span<const TransportSuffix> cqmgr_transport_suffixes() {
    return kSuffixes;
}

} // namespace cqmgr::conf
