// The health endpoints of the metrics listener (cqmgr_metrics_listen):
// /healthz says whether the event loop turns, /readyz whether the daemon
// has finished starting.
//
// Both are answered on the endpoint's own thread, never by the loop: a
// stalled loop could not say that it is stalled.  The loop instead keeps a
// heartbeat, a timer that fires every second (a quarter of
// cqmgr_health_stall_time when that is shorter) and stores the time in an
// atomic that /healthz reads: when it is older than the stall time, the
// loop has not turned for that long, and /healthz answers 503.  The same
// timer measures how late it fires (cqmgr_event_loop_lag_seconds: a loop
// that is busy for 200 ms fires it up to 200 ms late) and copies what
// /readyz waits for, which the loop's parts know, into another atomic.
// One timer a second is all the loop pays, whatever the traffic.
#pragma once

#include "counters.hpp"
#include "cqmgr/protocol/asio.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace cqmgr::qmgr {

// What /readyz waits for, one bit each.
namespace ready {
inline constexpr unsigned incoming_scanned = 1; // the start-up scan of incoming (and active)
inline constexpr unsigned deferred_scanned = 2; // the start-up scan of deferred
inline constexpr unsigned rewrite_answered = 4; // trivial-rewrite has answered
inline constexpr unsigned all = 7;
} // namespace ready

// Upper bounds (seconds) of the loop lag histogram: a turn of the loop
// takes microseconds; a scan of a large directory or a slow disk, longer.
inline constexpr std::array<double, 13> loop_lag_bounds{
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

// What the loop tells the endpoint's thread: written by the loop, read by
// the endpoint, through atomics only.
class HealthState {
  public:
    using Clock = std::chrono::steady_clock;

    // `stall_time`: cqmgr_health_stall_time.  The loop counts as having
    // turned now (it gets the stall time to start).
    explicit HealthState(std::chrono::seconds stall_time);

    std::chrono::seconds stall_time() const { return stall_time_; }

    // On the loop: it turned at `now`; what /readyz waits for that is done.
    void turned(Clock::time_point now);
    void set_ready(unsigned bits) { ready_.store(bits, std::memory_order_relaxed); }

    // An answer: 200 or 503, and its text.
    struct Answer {
        bool ok = false;
        std::string text;
    };
    // On any thread: /healthz's and /readyz's answers.
    Answer healthz(Clock::time_point now) const;
    Answer readyz() const;

  private:
    const std::chrono::seconds stall_time_;
    std::atomic<int64_t> turned_ns_; // steady clock
    std::atomic<unsigned> ready_{0};
};

// The heartbeat on the loop (see above).  Its timer belongs to the loop,
// and its pending wait owns it, so that it lives as long as the loop may
// call it, whoever else lets it go.
class Heartbeat : public std::enable_shared_from_this<Heartbeat> {
  public:
    // Reads what /readyz waits for on each beat (on the loop); none: ready.
    using ReadinessFn = std::function<unsigned()>;

    Heartbeat(asio::io_context& loop, std::shared_ptr<HealthState> state, ReadinessFn readiness);
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

    // The first beat now, then every period.
    void start();
    // Stops beating; on the loop's thread.
    void stop() {
        stopped_ = true;
        timer_.cancel();
    }
    // How late the beats fired (on the loop).
    const Histogram& lag() const { return lag_; }

  private:
    void arm();
    void beat();
    // Tells the endpoint's thread that the loop turned at `now`, and what
    // /readyz waits for that is done.
    void publish(HealthState::Clock::time_point now);

    std::shared_ptr<HealthState> state_;
    ReadinessFn readiness_;
    bool stopped_ = false;
    const HealthState::Clock::duration period_;
    asio::steady_timer timer_;
    HealthState::Clock::time_point due_{};
    Histogram lag_;
};

} // namespace cqmgr::qmgr
