// What ClusterLimits keeps for each queue it gates (cluster_limits.hpp),
// and the small helpers its parts share: the gate's state, the linger of
// an ended delivery's slot, the gate's key and the steady clock in
// milliseconds.  Internal to ClusterLimits' files.
#pragma once

#include "cluster_limits.hpp"
#include "cqmgr/cluster/redis_replies.hpp"

#include <chrono>
#include <cmath>

namespace cqmgr::qmgr {

struct ClusterLimits::Gate {
    std::string transport, queue;
    // Its number: a gate made again for the same queue (rescope()) is
    // another, and answers for the old one are not its own.
    uint64_t id = 0;
    // Concurrency: the scope, the cluster-wide limit, the leases held.
    std::string lease_scope;
    int limit = 0;
    std::vector<Lease> leases;
    bool lease_asking = false;
    // Rate: the scope, the spec, the token held (0 or 1).
    std::string rate_scope;
    std::optional<cluster::RateSpec> rate;
    int tokens = 0;
    bool rate_asking = false;
    // Waiting for a booked start to come due (the token then), or to ask
    // again after a refusal.
    bool rate_waiting = false;
    std::unique_ptr<asio::steady_timer> rate_timer;
    // This host's deliveries in flight through the gate, and those ended
    // less than linger_ms ago (their connections may still count at the
    // receiver).
    int busy = 0;
    int closing = 0;
    // Its dead mark is being read: nothing may start yet.
    bool mark_pending = false;
    // Its queue was freed while a delivery's end was being reported: the
    // gate goes at finished().
    bool freed = false;
    // Asking for a lease again (the cluster's count was full).
    std::unique_ptr<asio::steady_timer> retry;
    bool retry_armed = false;
};

namespace cluster_gate {

// How long the slot of a delivery that ended stays taken: the agent has
// closed its connection, but the receiver counts it until its server
// process has noticed, and a new connection in that moment (this host
// reusing the lease, or another host taking it) can be one too many.  At
// the shared count of 5 and about 300 deliveries a second, the receiver
// counted 6 once in 3,000 without it.
inline constexpr int linger_ms = 10;

inline std::string gate_key(const std::string& transport, const std::string& queue) {
    return transport + '\0' + queue;
}

inline double steady_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A wait a timer can hold and Redis could mean: else the answer is taken
// as none at all.
inline bool sane_wait(double ms) {
    return std::isfinite(ms) && ms >= 0 && ms <= cluster::max_reply_wait_ms;
}

inline std::chrono::microseconds micros(double ms) {
    return std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
}

} // namespace cluster_gate

} // namespace cqmgr::qmgr
