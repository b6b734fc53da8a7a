// The metrics that the dashboard and the alert rules (monitoring/) ask of
// the features beyond stock and of the bounds of the active queue: the
// limits from main.cf that the gauges are compared with, the learned limits
// and reply rules' actions in force, the cluster limits' Redis connections
// and the state store.  Copied on the event loop's thread into the
// snapshot (MetricsSnapshot::features), turned into families on the
// endpoint's.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <prometheus/metric_family.h>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

struct FeatureSnapshot {
    // qmgr_message_active_limit and qmgr_message_recipient_limit (as in
    // force), maximal_queue_lifetime and bounce_queue_lifetime (seconds).
    int64_t active_limit = 0, recipient_limit = 0;
    int64_t queue_lifetime = 0, bounce_lifetime = 0;
    // Per transport (those in memory and those the bounds name), by name:
    // the destinations with a learned limit, and the reply rules' actions
    // in force by kind (suspend, throttle, rate; a sender group's on a
    // destination counts as one).
    struct Transport {
        std::string name;
        int learned = 0;
        std::array<int, 3> actions{};
    };
    std::vector<Transport> transports;
    // The cluster limits' connections to Redis, while cqmgr_redis_server
    // is set: whose limits ("destination" or "provider"), whether it is up,
    // and the leases this host holds.
    struct Shared {
        std::string limits;
        bool up = false;
        int leases = 0;
    };
    std::vector<Shared> shared;
    // The state store, while cqmgr_state_database is set: whether it is
    // open and its last commit went through; the commits so far.
    std::optional<bool> state_up;
    uint64_t state_commits = 0;
};

// The limits of `params` and the bounds kept in `sched` (the rest is
// filled in by whoever has the features).  On the event loop's thread.
FeatureSnapshot feature_snapshot(const core::Scheduler& sched, const conf::QmgrParams& params);

// Counts in `s` a reply rule's bound `rule` on a sender group's mail to a
// destination of `transport` (ReplyActions::sender_actives): the
// scheduler keeps those apart from the bounds by name that
// feature_snapshot() counts.
void count_sender_rule(FeatureSnapshot& s, const std::string& transport,
                       const core::RuleLimit& rule);

// The families of `s`.
void feature_families(std::vector<prometheus::MetricFamily>& out, const FeatureSnapshot& s);

} // namespace cqmgr::qmgr
