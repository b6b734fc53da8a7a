#include "service_slots.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

ServiceSlots::ServiceSlots(asio::any_io_executor ex, int limit)
    : ex_(std::move(ex)), limit_(limit) {
    if (limit_ < 1) log::panic("ServiceSlots: limit " + std::to_string(limit_));
}

awaitable<void> ServiceSlots::acquire() {
    if (used_ < limit_ && waiters_.empty()) {
        ++used_;
        co_return;
    }
    auto t = std::make_shared<asio::steady_timer>(ex_, asio::steady_timer::time_point::max());
    waiters_.push_back(t);
    error_code ec;
    co_await t->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // Woken by release(), which passed its slot on (used_ unchanged).
}

awaitable<ServiceSlots::Held> ServiceSlots::hold() {
    co_await acquire();
    co_return Held(*this);
}

void ServiceSlots::release() {
    if (used_ <= 0) log::panic("ServiceSlots: release without acquire");
    if (waiters_.empty()) {
        --used_;
        return;
    }
    auto t = std::move(waiters_.front());
    waiters_.pop_front();
    t->cancel();
}

} // namespace cqmgr::qmgr
