// What the daemon opens as root, before it enters the jail (-c chroot, -u
// mail_owner): what would be out of reach afterwards.  Each is opened as
// docs/design.md's privilege model says ("What is opened before the
// jail"): root's own configuration is read and closed; what lies where
// mail_owner can plant a link is opened with mail_owner's rights; no
// descriptor of a directory is kept.
#pragma once
#include "backoff_profiles.hpp"
#include "cluster_limits.hpp"
#include "control_surface.hpp"
#include "daemon_config.hpp"
#include "fast_flush.hpp"
#include "metrics_endpoint.hpp"
#include "mx_channel.hpp"
#include "priority_class.hpp"
#include "regex_table.hpp"
#include "sender_groups.hpp"
#include "table_watch.hpp"

#include <map>
#include <memory>
#include <optional>

namespace cqmgr::qmgr {

struct Preopened {
    FlushDomains flush_domains;
    TableWatch tables; // fast_flush_domains' tables, watched for changes
    ClusterLimits::Tables limit_tables{};
    PriorityTables priorities{};
    SenderGroups senders{};
    std::shared_ptr<state::Store> state_store{};
    std::optional<RegexTable> reply_rules{};
    std::optional<RegexTable> reply_actions{}; // cqmgr_reply_actions
    BackoffProfiles backoff_profiles{};        // cqmgr_backoff_profiles
    std::optional<ControlSurface::Owner> control_owner{};
    std::unique_ptr<MetricsEndpoint> metrics{};
    // cqmgr_provider_maps' MX path: the c-ares channel (resolv.conf read
    // now), and the transports that follow MX records with their agents
    // (master.cf read now).  No channel: providers go by name only.
    std::optional<MxChannel> mx_channel{};
    std::map<std::string, std::string> mx_agents{};
};

// Opens them, in the queue directory (the working directory), and reads the
// time zone and the transports' process limits (into `config.params`); a
// fatal error from then on stops the metrics endpoint's thread before
// exit().  As stock's pre-jail initialisation, a table that cannot be read
// is fatal with stock's text.
Preopened pre_jail(DaemonConfig& config);

} // namespace cqmgr::qmgr
