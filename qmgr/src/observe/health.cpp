#include "health.hpp"

#include <algorithm>
#include <cstdio>

namespace cqmgr::qmgr {

namespace {
using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

int64_t to_ns(HealthState::Clock::time_point t) {
    return duration_cast<nanoseconds>(t.time_since_epoch()).count();
}

// "12.3 s".
std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
}
} // namespace

HealthState::HealthState(std::chrono::seconds stall_time)
    : stall_time_(stall_time), turned_ns_(to_ns(Clock::now())) {}

void HealthState::turned(Clock::time_point now) {
    turned_ns_.store(to_ns(now), std::memory_order_relaxed);
}

HealthState::Answer HealthState::healthz(Clock::time_point now) const {
    const double ago =
        static_cast<double>(to_ns(now) - turned_ns_.load(std::memory_order_relaxed)) / 1e9;
    const double limit = static_cast<double>(stall_time_.count());
    if (ago <= limit) return {true, "ok: the event loop turned " + seconds_text(ago) + " ago\n"};
    return {false, "stalled: the event loop has not turned for " + seconds_text(ago) +
                       " (cqmgr_health_stall_time = " + std::to_string(stall_time_.count()) +
                       "s)\n"};
}

HealthState::Answer HealthState::readyz() const {
    const unsigned bits = ready_.load(std::memory_order_relaxed);
    if ((bits & ready::all) == ready::all) return {true, "ready\n"};
    std::string why = "not ready:";
    if (!(bits & ready::incoming_scanned)) why += " the start-up scan of incoming is not done;";
    if (!(bits & ready::deferred_scanned)) why += " the start-up scan of deferred is not done;";
    if (!(bits & ready::rewrite_answered)) why += " trivial-rewrite has not answered yet;";
    why.back() = '\n';
    return {false, std::move(why)};
}

Heartbeat::Heartbeat(asio::io_context& loop, std::shared_ptr<HealthState> state,
                     ReadinessFn readiness)
    : state_(std::move(state)), readiness_(std::move(readiness)),
      // A beat every second, or four per stall time when that is shorter,
      // so that a loop that turns is never taken for a stalled one.
      period_(std::min<HealthState::Clock::duration>(
          std::chrono::seconds(1), duration_cast<milliseconds>(state_->stall_time()) / 4)),
      timer_(loop) {}

void Heartbeat::start() {
    due_ = HealthState::Clock::now();
    publish(due_);
    arm();
}

void Heartbeat::publish(HealthState::Clock::time_point now) {
    state_->turned(now);
    state_->set_ready(readiness_ ? readiness_() : ready::all);
}

void Heartbeat::arm() {
    due_ += period_;
    timer_.expires_at(due_);
    timer_.async_wait([self = shared_from_this()](const error_code& ec) {
        if (!ec && !self->stopped_) self->beat();
    });
}

void Heartbeat::beat() {
    const auto now = HealthState::Clock::now();
    const double late = std::max(0.0, std::chrono::duration<double>(now - due_).count());
    lag_.observe(loop_lag_bounds, late);
    publish(now);
    // After a long stall the next beat is a period from now, not a burst
    // of the beats missed.
    if (now - due_ > period_) due_ = now;
    arm();
}

} // namespace cqmgr::qmgr
