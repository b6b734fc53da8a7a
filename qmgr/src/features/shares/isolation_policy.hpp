// Slow-destination isolation's policy (docs/admin-guide.md, "Destination
// shares"), on a clock it is given (milliseconds).  A destination's share
// of its transport's agents (cqmgr_destination_agent_share) is its full
// share until the destination shows that it holds agents for long:
//
// - a delivery is slow when it took at least `slow_floor_ms` and at least
//   `slow_factor` times the transport's typical delivery (a running
//   average over the transport's deliveries that were not slow, so the
//   destinations that deliver most set it; none is slow before
//   `min_samples` such deliveries);
// - a slow delivery, or one that failed with a timeout or a dropped
//   connection (ReplyClass::timeout), lowers the share to half of what the
//   destination may have in flight (the smaller of its share and its
//   window, which the daemon gives as what the queue earned of its share
//   where that is less), at least 1;
// - a delivery that is not slow raises a lowered share to twice its value,
//   and back to the full share once that would reach it;
// - only deliveries that started after the last change count for another
//   one, so a cohort that was sent under the old share changes it once;
// - a destination that died (a failed cohort) gets a share of 1 (a probe),
//   and its full share back at its first delivery that is not slow;
// - a lowered share with no delivery for `forget_ms` goes back to full.
//
// Pure: no I/O, no clock of its own; the daemon (isolation.cpp) feeds it
// and applies what it returns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::qmgr {

struct IsolationSettings {
    int64_t slow_floor_ms = 10'000;
    int slow_factor = 10;
    int min_samples = 20;
    int64_t forget_ms = 3'600'000;
};

class IsolationPolicy {
  public:
    // A destination: transport and queue name.
    using Key = std::pair<std::string, std::string>;
    enum class Outcome {
        success, // delivered (or deferred by recipient): only its time counts
        timeout, // no answer in time, or a dropped connection
        failure, // any other failure of the destination
    };
    // A change of a destination's share; 0 is the full share.
    struct Change {
        Key dest;
        int before = 0;
        int after = 0;
        enum class Why { slow, timeout, probe, fast, forget } why;
        int64_t elapsed_ms = 0; // the delivery that caused it (slow, timeout, fast)
    };

    explicit IsolationPolicy(IsolationSettings settings = {}) : s_(settings) {}

    // A delivery to `dest` ended at `now_ms` after `elapsed_ms`.  `full`:
    // the destination's full share (agents); `window`: its concurrency
    // window now.
    std::optional<Change> delivered(const Key& dest, int full, int window, Outcome outcome,
                                    int64_t elapsed_ms, int64_t now_ms);
    // `dest` died: a probe of one delivery when it comes back.
    std::optional<Change> died(const Key& dest, int full, int64_t now_ms);
    // Gives back the lowered shares with no delivery for forget_ms.
    std::vector<Change> sweep(int64_t now_ms);

    // The lowered share of `dest`, 0 when it has its full share.
    int lowered(const Key& dest) const;
    // Whether `dest` waits for a probe's success.
    bool probing(const Key& dest) const;
    // The transport's typical delivery time (ms), 0 before min_samples.
    int64_t typical_ms(const std::string& transport) const;

  private:
    struct Dest {
        int share = 1;
        bool probe = false;
        int64_t changed_ms = 0; // when the share last changed
        int64_t last_ms = 0;    // the last delivery's end
    };
    struct Typical {
        double ms = 0;
        int samples = 0;
    };
    // Whether `elapsed_ms` is slow on the transport of `typical`.
    bool slow(const Typical& typical, int64_t elapsed_ms) const;

    IsolationSettings s_;
    std::map<Key, Dest> dests_; // only the destinations with a lowered share
    std::map<std::string, Typical> typical_;
};

} // namespace cqmgr::qmgr
