// The replies of the control socket's queries (docs/control-protocol.md):
// summary, queues, jobs, message and deliveries, each built in one pass
// over the daemon's live state (the scheduler core, the messages in the
// active queue, the deliveries in flight, the counters).  Reading only:
// nothing here changes what the daemon does.
#pragma once

#include "adaptive.hpp"
#include "arrival_index.hpp"
#include "clock.hpp"
#include "control_explain.hpp"
#include "control_queues_reply.hpp"
#include "counters.hpp"
#include "cqmgr/control/reply.hpp"
#include "cqmgr/control/request.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "delivery_record.hpp"
#include "isolation.hpp"
#include "message.hpp"
#include "message_table.hpp"
#include "metrics.hpp"
#include "reply_actions.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

class ClusterLimits;
class Providers;
class DeferredIndex;

// The state of the scans and the feed.
struct FeedState {
    bool paused = false;
    std::vector<std::string> scanning; // queues whose scans are running
    // incoming, active and deferred: their sizes and oldest ages, as the
    // metrics show them (none: not known yet).
    std::array<std::optional<MetricsSnapshot::Queue>, 3> queues;
};

// Where the replies come from.  Everything is read at the time of the
// query; the references must outlive the ControlQueries.
struct ControlSources {
    const core::Scheduler& sched;
    const MessageTable& messages; // the active queue (QueueManager's)
    const ArrivalIndex& arrivals; // of those messages
    const DeliveryRecord& deliveries;
    const Counters& counters;
    const WallClock& clock;
    std::function<FeedState()> feed;
    int64_t message_active_limit = 0;    // qmgr_message_active_limit
    int64_t message_recipient_limit = 0; // qmgr_message_recipient_limit
    // What the adaptive limits learned and why (nullptr: they are off).
    const AdaptiveLimits* adaptive = nullptr;
    // The destination shares' isolation (nullptr: no share is set).
    const Isolation* isolation = nullptr;
    // Providers' membership (nullptr: cqmgr_provider_maps is empty) and
    // their limits.
    const Providers* providers = nullptr;
    const ClusterLimits* provider_limits = nullptr;
    // The reply rules' actions in force (nullptr: no rules).
    const ReplyActions* actions = nullptr;
    // The cluster's limits (nullptr: none is configured).
    const ClusterLimits* cluster = nullptr;
    // The index of the mail cqmgr deferred (nullptr: none is kept).
    const DeferredIndex* deferred = nullptr;
    // What the features with limits of their own add to explain.
    ExplainHooks explain = {};
};

// Who answers: the process, its version and when it started.
struct ControlIdentity {
    int64_t pid = 0;
    std::string version;
    protocol::TimeVal started;
};

class ControlQueries {
  public:
    using Json = control::Json;

    ControlQueries(ControlSources sources, ControlIdentity identity);

    // The reply to a query request (r.is_query()); valid until the next call.
    const Json& answer(const control::Request& r) const;

    Json help() const;
    Json summary() const;
    // Valid until the next call (the tree is refilled in place).
    const Json& queues(const std::string& transport) const;
    Json jobs(const std::string& transport) const;
    Json message(const std::string& queue_id) const;
    Json deliveries() const;
    Json providers() const;
    Json explain(const control::Target& target) const;

  private:
    Json job_state(const core::Transport& t, const core::Job& j) const;

    ControlSources src_;
    ControlIdentity id_;
    mutable QueuesReply queues_; // refilled by every queues()
    mutable Json reply_;         // answer()'s other replies
};

} // namespace cqmgr::qmgr
