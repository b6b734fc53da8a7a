// The decisions of a message's end, as stock qmgr makes them once every
// entry is done: whether the trace service must report, whether an
// undelivered message has expired or is due for a delay warning, and how
// long a deferred message waits before its next attempt.  Pure functions of
// the envelope, the parameters and the time.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/queuefile/envelope.hpp"

#include <cstdint>
#include <random>

namespace cqmgr::qmgr {

// True when the message's end goes through the trace service: sendmail -v
// or -bv, a delay-cleared confirmation, or a DSN SUCCESS request.
bool wants_trace(const queuefile::Envelope& env);

// What becomes of a message with recipients left to retry.
enum class Undelivered {
    keep,          // deferred as it is
    warn,          // deferred, after a delay warning to the sender
    expired,       // returned to the sender: its queue lifetime is over
    force_expired, // returned to the sender: postsuper -e
};
Undelivered undelivered_fate(const queuefile::Envelope& env, bool force_expire, int64_t now,
                             const conf::QmgrParams& p);
// The same from the envelope's facts alone: whether the sender is null (or
// missing), the arrival time and the delay warning time (0: none due).
Undelivered undelivered_fate(bool null_sender, int64_t arrival, int64_t warn_time,
                             bool force_expire, int64_t now, const conf::QmgrParams& p);

// The log word of an expiry ("expired" or "force-expired").
const char* expiry_word(Undelivered fate);

// How long a deferred message waits: its age, within minimal_backoff_time
// and maximal_backoff_time (the minimum when its age is unknown).
int64_t backoff(const queuefile::Envelope& env, int64_t now, const conf::QmgrParams& p);
// The same from the arrival time alone (0 or less: unknown).
int64_t backoff(int64_t arrival, int64_t now, const conf::QmgrParams& p);

// cqmgr_backoff_jitter: `delay` moved by an offset within +-`percent` of it,
// uniform over that range for `u` uniform in [0, 1] (the caller's random
// source), then bounded as backoff() bounds it.  With percent 0, `delay`.
int64_t jittered_backoff(int64_t delay, int64_t percent, double u, const conf::QmgrParams& p);
// The wait before a deferred message's next attempt, as a message's end
// sets it: backoff() from its arrival time, jittered by
// cqmgr_backoff_jitter with a draw from `random`.
int64_t next_attempt_delay(int64_t arrival, int64_t now, const conf::QmgrParams& p,
                           std::mt19937_64& random);
// A seed for a random source: getrandom(2), else the time and the pid.
uint64_t random_seed();

} // namespace cqmgr::qmgr
