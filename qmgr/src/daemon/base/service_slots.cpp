#include "service_slots.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

ServiceSlots::ServiceSlots(asio::any_io_executor ex, int limit)
    : ex_(std::move(ex)), state_(std::make_shared<State>()) {
    if (limit < 1) log::panic("ServiceSlots: limit " + std::to_string(limit));
    state_->limit = limit;
}

int ServiceSlots::used() const {
    return state_->used;
}

int ServiceSlots::waiting() const {
    return static_cast<int>(state_->waiters.size());
}

awaitable<ServiceSlots::Held> ServiceSlots::hold() {
    State& s = *state_;
    if (s.used < s.limit && s.waiters.empty()) {
        ++s.used;
        co_return Held(state_);
    }
    auto t = std::make_shared<asio::steady_timer>(ex_, asio::steady_timer::time_point::max());
    s.waiters.push_back(t);
    std::weak_ptr<State> state = state_;
    error_code ec;
    co_await t->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // Woken by a slot given back, which passed it on (used unchanged).
    co_return Held(std::move(state));
}

ServiceSlots::Held::~Held() {
    if (auto s = state_.lock()) s->release();
}

void ServiceSlots::State::release() {
    if (used <= 0) log::panic("ServiceSlots: release without acquire");
    if (waiters.empty()) {
        --used;
        return;
    }
    auto t = std::move(waiters.front());
    waiters.pop_front();
    t->cancel();
}

} // namespace cqmgr::qmgr
