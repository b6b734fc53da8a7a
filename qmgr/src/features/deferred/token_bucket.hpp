// A token bucket on a clock given by the caller: tokens come in at a
// steady rate per second and are kept up to a burst; taking one succeeds
// while at least one whole token is left.  The recovery ramp (see
// recovery_ramp.hpp) keeps one per destination.  Times are microseconds,
// so that rates of more than one per second are not rounded to whole
// seconds.
#pragma once

#include <cstdint>

namespace cqmgr::qmgr {

class TokenBucket {
  public:
    // A full bucket at time `now_us`.
    TokenBucket(double rate, double burst, int64_t now_us)
        : rate_(rate), burst_(burst), tokens_(burst), last_us_(now_us) {}

    // True when a whole token is there at `now_us`.
    bool ready(int64_t now_us);
    // Takes one token if there is one; false otherwise.
    bool take(int64_t now_us);
    // True when the bucket is full again: it then holds no history, and
    // dropping it changes nothing.
    bool full(int64_t now_us);
    // The tokens at the last update (for tests).
    double tokens() const { return tokens_; }

  private:
    // Adds what came in since the last update, up to the burst.
    void refill(int64_t now_us);

    double rate_;
    double burst_;
    double tokens_;
    int64_t last_us_;
};

} // namespace cqmgr::qmgr
