// The generic cell-rate algorithm (GCRA) on one node: what a rate limit
// does while Redis is away, and the reference the shared script follows.
//
// The state is one number, the theoretical arrival time (TAT): when the
// next start would be due if starts had come exactly at the steady rate.
// A start at `now` is allowed while it is no earlier than TAT minus the
// burst allowance (burst × interval, less the one start itself); allowed,
// it moves TAT one interval on.  Times are milliseconds on any clock that
// does not go backwards; fractions are kept, so rates of many per second
// are exact.
#pragma once

#include "cqmgr/cluster/rate_spec.hpp"

namespace cqmgr::cluster {

struct GcraResult {
    bool allowed = false;
    double retry_after_ms = 0; // when denied: how long until a start would be allowed
};

// Takes one start at `now` from the cell whose state is `tat` (0 for a
// fresh cell), updating `tat` when allowed.
GcraResult gcra_take(double& tat, double now, const RateSpec& rate);

} // namespace cqmgr::cluster
