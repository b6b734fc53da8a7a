// The deadlines of the agent calls of one io_context (see agent_deadlines.hpp).
#include "cqmgr/protocol/agent_deadlines.hpp"

namespace cqmgr::protocol {

namespace {
// One lookup per call would take the service registry's lock each time:
// the last context's deadlines are kept at hand (until they shut down).
thread_local asio::execution_context* last_context = nullptr;
thread_local AgentDeadlines* last = nullptr;
} // namespace

AgentDeadlines& AgentDeadlines::of(const asio::any_io_executor& ex) {
    asio::execution_context& ctx = asio::query(ex, asio::execution::context);
    if (&ctx != last_context) {
        last = &asio::use_service<AgentDeadlines>(ctx);
        last_context = &ctx;
    }
    return *last;
}

void AgentDeadlines::arm(AgentDeadline& d, Duration timeout, const asio::any_io_executor& ex) {
    if (d.is_linked())
        d.unlink();
    else
        ++armed_;
    size_t i = 0;
    while (i < lanes_.size() && lanes_[i].timeout != timeout)
        ++i;
    if (i == lanes_.size()) lanes_.push_back(Lane{timeout, {}});
    // Within a lane the deadlines come in the order they were set.
    d.due_ = Clock::now() + timeout;
    lanes_[i].waiting.push_back(d);
    set_timer(d.due_, ex);
}

void AgentDeadlines::disarm(AgentDeadline& d) {
    if (!d.is_linked()) return;
    d.unlink();
    if (--armed_ > 0 || !timer_due_) return;
    timer_due_.reset();
    timer_->cancel();
}

void AgentDeadlines::set_timer(Clock::time_point due, const asio::any_io_executor& ex) {
    if (timer_due_ && *timer_due_ <= due) return;
    if (!timer_) timer_.emplace(ex);
    timer_due_ = due;
    // A wait still pending is cancelled (its handler sees the error).
    timer_->expires_at(due);
    timer_->async_wait([this, ex](const error_code& ec) {
        if (ec) return;
        timer_due_.reset();
        expire(ex);
    });
}

void AgentDeadlines::expire(const asio::any_io_executor& ex) {
    const Clock::time_point now = Clock::now();
    // By index: a passed deadline may arm another call, and a new lane
    // would move the vector.
    for (size_t i = 0; i < lanes_.size(); ++i) {
        while (!lanes_[i].waiting.empty() && lanes_[i].waiting.front().due_ <= now) {
            AgentDeadline& d = lanes_[i].waiting.front();
            lanes_[i].waiting.pop_front();
            --armed_;
            d.deadline_passed();
        }
    }
    std::optional<Clock::time_point> next;
    for (const Lane& lane : lanes_)
        if (!lane.waiting.empty() && (!next || lane.waiting.front().due_ < *next))
            next = lane.waiting.front().due_;
    if (next) set_timer(*next, ex);
}

void AgentDeadlines::shutdown() {
    if (last == this) {
        last = nullptr;
        last_context = nullptr;
    }
    timer_.reset();
    timer_due_.reset();
    lanes_.clear(); // leaves the calls' hooks unlinked
    armed_ = 0;
}

} // namespace cqmgr::protocol
