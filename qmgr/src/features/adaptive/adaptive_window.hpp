// The adaptive limits' window model (cqmgr_adaptive_rate_model = window;
// docs/admin-guide.md, "Adaptive limits"), for receivers that count each
// client's messages in fixed windows, as Postfix's anvil does: a window
// starts at the client's first event after the last one ended, and ends
// once its start plus the unit lies before the current second (so a unit
// of 60 s lasts 61 whole seconds).  A pace under such a limit is either
// refused (it lands in a spent window) or slower than the allowance; the
// allowance is the quota at the start of each window.  Per destination,
// on a clock it is given (milliseconds):
//
// - windows: a window starts at the first delivery start after the last
//   one ended, and lasts `window_ms`; it ends at a whole second, counted
//   from the latest second the receiver may have stamped its start with:
//   that of the first end of a delivery of the window that reached it (a
//   success or a rate-limit refusal: its session came after the stamp),
//   and until one has ended, that of the start plus `edge_ms`;
// - a rate-limit strike of a delivery that started in the current window
//   teaches the quota: the deliveries of the window that succeeded (at
//   least 1; successes of the window that come back after the strike
//   raise it), and holds the destination until the window ends.  A later
//   strike means the quota was too high: it becomes that window's
//   successes.  A strike of a delivery of an earlier window teaches
//   nothing (the receiver counted it in the window it spent);
// - once a quota is learned: when a window's quota of deliveries has
//   started, the destination is held until the window ends; the first
//   delivery of each window goes alone (one at a time until one
//   succeeds), so that a window that opened before the receiver's ended
//   costs one refusal, not a burst;
// - a strike while nothing of the window has succeeded teaches no quota:
//   the receiver's window has not ended (ours began a second early, or
//   the receiver counted mail from before a restart).  The destination is
//   held until the next second the first time, and for a whole window if
//   it happens again in the next window;
// - after `probe_deliveries` successes in windows that spent their quota,
//   or `probe_time` without a strike, the quota goes up by one; after
//   `forget_time` without a strike it is forgotten.
//
// Pure: no I/O, no clock of its own; the daemon (adaptive.cpp) feeds it
// and hands the core what core_part() returns.
#pragma once

#include "cqmgr/core/learned.hpp"
#include "reply_class.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

struct WindowSettings {
    int64_t window_ms = 61'000; // a window: the receiver's unit and the strict comparison's second
    int64_t edge_ms = 500;      // how much later than a start the receiver counts it, until known
    int64_t probe_deliveries = 500;  // successes at the quota before +1; 0 = never
    int64_t probe_time_ms = 300'000; // time without a strike before +1; 0 = never
    int64_t forget_time_ms = 3'600'000;
};

class AdaptiveWindow {
  public:
    // A change of a destination's quota and why.
    struct Change {
        std::string dest;
        int before = 0;
        int after = 0;
        enum class Why { strike, probe, forget } why = Why::strike;
    };
    // What a start or an end did: a change of the quota, and whether the
    // core's part (core_part()) changed.
    struct Step {
        std::optional<Change> change;
        bool core = false;
    };

    explicit AdaptiveWindow(WindowSettings s = {}) : s_(s) {}

    // A delivery to `dest` starts at `now_ms`.
    Step started(const std::string& dest, int64_t now_ms);
    // A delivery to `dest` that started at `started_ms` ended at `now_ms`:
    // `cls` is its reply's class (nullopt: it succeeded).
    Step delivery(const std::string& dest, std::optional<ReplyClass> cls, int64_t started_ms,
                  int64_t now_ms);
    // Forgets quotas quiet for forget_time, and destinations idle for a
    // window with nothing learned; the forgotten quotas.
    std::vector<Change> sweep(int64_t now_ms);
    // Takes up `quota` for `dest`, learned at `since_ms` by an earlier run.
    void restore(const std::string& dest, int quota, int64_t since_ms);
    // The learned quota of `dest` (0: none).
    int quota(const std::string& dest) const;
    // What the core holds `dest` to now: the quota and the window
    // (seconds), for display; a hold until the window's end (the core's
    // clock, whole seconds) while its quota is spent; a concurrency of 1
    // while the window's first delivery is out alone.
    core::LearnedLimit core_part(const std::string& dest, int64_t now_ms) const;
    // The window in whole seconds, as shown.
    int window_seconds() const { return static_cast<int>((s_.window_ms + 999) / 1000); }
    size_t tracked() const { return dests_.size(); }

  private:
    struct Dest {
        int quota = 0;           // learned; 0 = none
        int told = 0;            // the quota last reported in a Change
        int64_t start_ms = -1;   // the current window's first start; -1 = none
        int64_t end_s = 0;       // the second the current window ends
        bool closed = false;     // ended early by a strike: the next start opens one
        bool contact = false;    // a delivery of the window reached the receiver and ended
        int starts = 0;          // of the current window
        int ok = 0;              // successes of the current window's deliveries
        bool held = false;       // until end_s
        bool alone = false;      // the window's first delivery is out alone
        bool struck = false;     // the current window taught the quota
        bool full = false;       // the current window started its whole quota
        int early = 0;           // strikes in a row before anything succeeded
        int64_t last_strike = 0; // or the last probe: the start of the quiet time
        int64_t successes = 0;   // in full windows since then
        int64_t last_active = 0;
    };
    // The second a window that starts at `start_ms` ends.
    int64_t end_of(int64_t start_ms) const;
    core::LearnedLimit part(const Dest& d, int64_t now_ms) const;
    // Whether a delivery that started at `started_ms` belongs to `d`'s
    // current window.
    static bool in_window(const Dest& d, int64_t started_ms) {
        return !d.closed && d.start_ms >= 0 && started_ms >= d.start_ms;
    }
    // A strike of a delivery of `d`'s current window.
    void strike(Dest& d, int64_t now_ms);
    // A success of a delivery of `d`'s current window; whether it probed
    // (the quota went up by one).
    bool success(Dest& d, int64_t now_ms);
    // The change of `d`'s quota since it was last told, if any.
    std::optional<Change> told(const std::string& dest, Dest& d, Change::Why why);

    WindowSettings s_;
    std::unordered_map<std::string, Dest> dests_;
};

} // namespace cqmgr::qmgr
