#include "pre_jail.hpp"

#include "log.hpp"
#include "mx_transports.hpp"
#include "process_limits.hpp"
#include "state_open.hpp"

#include <algorithm>
#include <ctime>
#include <utility>

namespace cqmgr::qmgr {

namespace {

// Opens what fast_flush_domains names, files and tables.
FlushDomains open_flush_domains(const conf::QmgrParams& params) {
    bool parent_style = std::ranges::count(params.parent_domain_matches_subdomains,
                                           std::string("fast_flush_domains")) > 0;
    return FlushDomains(params.fast_flush_domains, parent_style);
}

} // namespace

Preopened pre_jail(DaemonConfig& config) {
    const conf::CommandLine& cl = config.cl;
    conf::QmgrParams& params = config.params;
    // fast_flush_domains' files and tables are opened now, and the time
    // zone is read while /etc is still reachable.
    FlushDomains flush_domains = open_flush_domains(params);
    TableWatch tables(flush_domains.tables());
    ::tzset();
    Preopened o{.flush_domains = std::move(flush_domains), .tables = std::move(tables)};
    // cqmgr_rate_limits and cqmgr_cluster_concurrency_limits: read now,
    // while their files are reachable.
    try {
        o.limit_tables = ClusterLimits::open_tables(params);
    } catch (const conf::ConfigError& e) {
        config_fatal(e);
    }
    // Priority lanes: their tables, and each transport's process limit
    // from master.cf for the shares, both out of reach once chrooted.
    if (params.lanes()) {
        try {
            o.priorities =
                PriorityTables::open(params.cqmgr_priority_maps, params.cqmgr_priority_header_maps,
                                     [](const std::string& w) { log::warn(w); });
        } catch (const conf::ConfigError& e) {
            config_fatal(e);
        }
    }
    // Sender limits: their tables, out of reach once chrooted.
    if (!params.cqmgr_sender_limits.empty()) {
        try {
            o.senders = SenderGroups::open(
                params.cqmgr_sender_limits, [](const std::string& w) { log::warn(w); },
                params.cqmgr_sender_class_header_maps);
        } catch (const conf::ConfigError& e) {
            config_fatal(e);
        }
    }
    // The lanes' and destinations' shares and the finch policy's count each
    // transport's agents.
    if (params.lanes() || params.destination_shares || params.finch_policy_used)
        params.transport_process_limits = transport_process_limits(params);
    // The state store (destination state and control settings), out of
    // reach once chrooted: opened with mail_owner's ids, and checked (in a
    // child process) while this process has one thread.
    if (!cl.stdin_mode) o.state_store = open_state_store(params);
    // The adaptive limits' reply rules, in the configuration directory.
    if (!params.cqmgr_adaptive_limit_transports.empty() &&
        !params.cqmgr_adaptive_reply_rules.empty())
        o.reply_rules =
            RegexTable::open(params.cqmgr_adaptive_reply_rules, [](const std::string& w) {
                log::warn("cqmgr_adaptive_reply_rules: " + w);
            });
    // The reply rules that act, in the configuration directory.
    if (!params.cqmgr_reply_actions.empty()) {
        o.reply_actions = RegexTable::open(params.cqmgr_reply_actions, [](const std::string& w) {
            log::warn("cqmgr_reply_actions: " + w);
        });
        // Their backoff profiles, as the sender limits' tables are read.
        try {
            o.backoff_profiles = BackoffProfiles::open(params.cqmgr_backoff_profiles,
                                                       [](const std::string& w) { log::warn(w); });
        } catch (const conf::ConfigError& e) {
            config_fatal(e);
        }
    }
    // The MX lookups of cqmgr_provider_maps: c-ares reads resolv.conf and
    // the rest of its configuration when the channel is made, so it is
    // made now (mx_channel.hpp).  A failure leaves the providers to the
    // destinations listed by name.
    if (!params.cqmgr_provider_maps.empty() && !cl.stdin_mode) {
        o.mx_agents = mx_lookup_transports(config.cf, params);
        if (!o.mx_agents.empty()) {
            if (auto channel = MxChannel::open(mx_resolver_options(params)))
                o.mx_channel.emplace(std::move(*channel));
            else
                log::warn("cqmgr_provider_maps: no MX lookups (only destinations listed by "
                          "name): " +
                          channel.error());
        }
    }
    // The control socket serves root and mail_owner and belongs to
    // mail_owner: the account is looked up now, as the jail has no
    // password file.
    o.control_owner = ControlSurface::socket_owner(params);
    // The metrics endpoint's sockets, when configured, so that a privileged
    // port works too (metrics_endpoint.hpp): a busy one is waited for a
    // little while root can still open it; another is retried later.
    if (!params.cqmgr_metrics_listen.empty() && !cl.stdin_mode) {
        o.metrics = std::make_unique<MetricsEndpoint>(
            params.cqmgr_metrics_listen,
            static_cast<size_t>(params.cqmgr_metrics_destination_limit),
            std::chrono::seconds(params.cqmgr_health_stall_time));
        o.metrics->open(std::chrono::seconds(5));
    }
    // A fatal error, too, ends the endpoint's thread before exit().
    log::set_exit_hook([metrics = o.metrics.get()] {
        if (metrics) metrics->stop();
    });
    return o;
}

} // namespace cqmgr::qmgr
