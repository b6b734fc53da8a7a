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
//
// A start may also be booked ahead: when the cell is not ready yet but
// will be within a horizon, the start is granted for the moment it will be
// (TAT moves on as if it had been taken then) and the caller waits until
// that moment.  Asking again after a refusal always arrives a little late
// (a timer, a round trip), and at 50/s a millisecond late each time is 5 %
// of the rate lost; a booked start is due exactly on time, however late
// the next one is asked for, as long as someone books ahead.
#pragma once

#include "cqmgr/cluster/rate_spec.hpp"

namespace cqmgr::cluster {

struct GcraResult {
    bool allowed = false;
    double retry_after_ms = 0; // when denied: how long until a start could be had (or booked)
    double wait_ms = 0;        // when allowed: how long until the start is due (0: now)
};

// Takes one start from the cell whose state is `tat` (0 for a fresh cell):
// at `now` if the cell allows it, else booked for the moment it will if
// that is at most `horizon_ms` ahead.  Updates `tat` when allowed.
GcraResult gcra_take(double& tat, double now, const RateSpec& rate, double horizon_ms = 0);

// How far ahead a start of `rate` may be booked: a second, or one interval
// when that is longer.  Long enough for several hosts (or queues sharing
// the scope) to each hold a booking at 50/s; short enough that a booking
// whose mail has gone (a start that then never happens) costs little.
double gcra_booking_horizon_ms(const RateSpec& rate);

} // namespace cqmgr::cluster
