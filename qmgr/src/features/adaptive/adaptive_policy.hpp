// The adaptive limits' policy per destination (docs/admin-guide.md,
// "Adaptive limits"), AIMD style, on a clock it is given (milliseconds):
//
// - a connection-limit reply to a delivery that started while B deliveries
//   (itself included) were in flight means the receiver allows fewer than
//   B: the limit becomes B - 1 (at least 1), or stays lower if it was;
// - a rate-limit reply means the receiver allows less than the pace the
//   delivery was sent at, and the limit takes one step down: with more
//   than one delivery in flight at the strike, the concurrency limit
//   becomes that count less `rate_margin` percent (at least one fewer, at
//   least 1); from one at a time on, a pause after each delivery, in whole
//   seconds (the core's unit): the first one `rate_margin` percent under
//   the rate of the last `rate_window`, less what a delivery takes (the
//   pause comes on top of it), a later one `rate_margin` percent under
//   the pace the current pause gives (at least a second longer).  A
//   refusal of a delivery sent before the last step down, or before one
//   sent after it succeeded, is the receiver's count of the faster pace
//   still in its window: it changes nothing;
// - after `probe_deliveries` successes at the limit, or `probe_time`
//   without a strike, the limit goes up by one (the pause down by a
//   second) to find out whether the receiver allows more;
// - before anything is learned (slow start), the deliveries in flight
//   may rise only one above the highest count at which a delivery started
//   and succeeded: a receiver's limit then costs at most the one delivery
//   that crossed it, where the concurrency feedback (+1 per success by
//   default) would launch several past it before the first refusal came
//   back;
// - after `forget_time` without a strike, the destination is forgotten:
//   its limit becomes a slow start from there.
//
// Pure: no I/O, no clock of its own; the daemon (adaptive.cpp) feeds it
// and applies what it returns.
#pragma once

#include "cqmgr/core/learned.hpp"
#include "reply_class.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

struct AdaptiveSettings {
    int64_t probe_deliveries = 500;     // successes at the limit before +1; 0 = never
    int64_t probe_time_ms = 300'000;    // time without a strike before +1; 0 = never
    int64_t forget_time_ms = 3'600'000; // time without a strike before forgetting
    int64_t rate_window_ms = 60'000;    // over how long the rate at a strike is measured
    int rate_margin = 10;               // percent under the struck rate
    bool slow_start = true;             // the cap of destinations with nothing learned
};

class AdaptivePolicy {
  public:
    using Limit = core::LearnedLimit;
    // A change of a destination's limit and why.
    struct Change {
        std::string dest;
        Limit before;
        Limit after;
        // ramp: the slow start's cap moved (or ended), nothing was learned.
        enum class Why { strike, probe, forget, ramp } why;
    };

    explicit AdaptivePolicy(AdaptiveSettings s = {}) : s_(s) {}

    // A delivery to `dest` starts at `now_ms` with `busy` deliveries in
    // flight, itself included; `ceiling`: the most the destination may
    // ever have (0: no limit), where a slow start ends.
    void started(const std::string& dest, int busy, int ceiling, int64_t now_ms);
    // A delivery to `dest` ended at `now_ms`: `cls` is its reply's class
    // (nullopt: it succeeded, all recipients done without trouble),
    // `busy_at_start` the destination's deliveries in flight when it
    // started, itself included, `started_ms` when it started (-1: not
    // known, as if now).  Returns the change it causes, if any.
    std::optional<Change> delivery(const std::string& dest, std::optional<ReplyClass> cls,
                                   int busy_at_start, int64_t now_ms, int64_t started_ms = -1);
    // Forgets the destinations that have been quiet for forget_time (and
    // the rate history of idle ones); the forgotten limits.
    std::vector<Change> sweep(int64_t now_ms);
    // Takes up `limit` for `dest`, learned (struck or probed) at
    // `since_ms`: a limit kept from an earlier run.  Probing and forgetting
    // count from `since_ms`, as if the limit had been learned here.
    void restore(const std::string& dest, const Limit& limit, int64_t since_ms);
    // What is learned for `dest` now, or its slow start's cap (nothing:
    // !any()).
    Limit limit(const std::string& dest) const;
    // Whether `dest`'s limit, if any, is a slow start's cap.
    bool ramping(const std::string& dest) const;
    size_t tracked() const { return dests_.size(); }

  private:
    struct Dest {
        Limit limit;
        int64_t last_strike = 0;  // or the last probe: the start of the quiet time
        int64_t successes = 0;    // at the limit since then
        std::deque<int64_t> done; // delivery ends within the rate window
        // Slow start (before the first strike, or after forgetting): the
        // cap is max(ok + 1, top), in limit.concurrency.
        bool ramping = false;
        int top = 0;            // the highest count a delivery started at
        int ok = 0;             // the highest count a delivery succeeded at
        int ceiling = 0;        // the transport's limit; 0: none
        int64_t last_start = 0; // activity, for forgetting idle slow starts
        // Rate limits: when a strike last lowered the limit, and whether a
        // delivery sent since then has succeeded; what a successful
        // delivery takes, on average (ms; 0: not known).
        int64_t last_cut = -1;
        bool proven = true;
        double mean_ms = 0;
    };
    // `d`, created now if new (then in slow start, if that is on).
    Dest& dest_of(const std::string& dest);
    // A success at `busy` during `d`'s slow start: its new cap, or none
    // (past the ceiling: the slow start is over).
    void ramp_success(Dest& d, int busy);
    // The pause (whole seconds, >= 1) after a rate-limit strike: under a
    // pause, the margin under the pace it gave; else the margin under the
    // rate measured over `d.done`, less a delivery's own time.
    int rate_delay(const Dest& d, int64_t now_ms) const;

    AdaptiveSettings s_;
    std::unordered_map<std::string, Dest> dests_;
};

} // namespace cqmgr::qmgr
