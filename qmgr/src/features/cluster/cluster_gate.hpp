// The arithmetic of a cluster gate (cluster_limits.hpp): how many
// deliveries a queue may have in flight given what it holds of a shared
// limit, when to ask for another lease, and how many leases to keep.  Kept
// apart from the asynchronous plumbing so that it can be tested alone.
#pragma once

#include "cqmgr/cluster/rate_spec.hpp"
#include "cqmgr/core/learned.hpp"

#include <optional>

namespace cqmgr::qmgr {

// What one queue's gate holds and has in flight.
struct GateCounts {
    // Its dead mark is still being read: nothing may start.
    bool mark_pending = false;
    // The concurrency limit of its scope (0: none).
    int limit = 0;
    // The leases held are what counts (Redis is up, or was less than a
    // lease time ago); else this host alone keeps the limit.
    bool shared = false;
    // The leases this queue holds that still count, and those this host
    // holds in the whole scope.
    int leases = 0;
    int scope_leases = 0;
    // This queue's deliveries in flight, and those ended less than the
    // linger time ago.
    int busy = 0;
    int closing = 0;
    // This host's deliveries in the whole scope (busy and closing, every
    // queue the scope covers).
    int scope_busy = 0;
    // A rate applies, and the tokens held (0 or 1).
    bool rate = false;
    int tokens = 0;
};

// The number of deliveries the queue may have in flight (its core gate),
// or nullopt when no limit applies.
std::optional<int> gate_allowance(const GateCounts& c);

// Whether one more lease is worth asking for, for a queue whose window is
// `window` and which has mail waiting: every lease held is in use, the
// window has room for another delivery, and this host holds fewer leases
// of the scope than its limit (more could never be used).
bool lease_wanted(const GateCounts& c, int window);

// How many leases to keep: one per delivery in flight or closing, and one
// for the next delivery while mail waits.
int leases_to_keep(const GateCounts& c, bool mail_waiting);

// A scope's limits from its table, narrowed by what the adaptive limits
// learned for it (their provider scope): a learned concurrency cap lowers
// the concurrency limit; a learned pause after each delivery becomes one
// delivery at a time at most one start per pause (the provider's pace, as
// a rate: a pause on each member would let every member go at that pace).
struct ScopeLimits {
    int concurrency = 0; // 0: none
    std::optional<cluster::RateSpec> rate;
    bool operator==(const ScopeLimits&) const = default;
};
ScopeLimits narrowed_by_learned(ScopeLimits table, const core::LearnedLimit& learned);

} // namespace cqmgr::qmgr
