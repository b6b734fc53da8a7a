// Changes asked of the scheduler, deferred out of its callbacks (see
// core_requests.hpp).
#include "core_requests.hpp"

namespace cqmgr::qmgr {

void CoreRequests::set_limit(const core::AdminTarget& target, const core::LimitChange& change) {
    if (!sched_.in_callback() && pending_.empty()) {
        sched_.set_limit(target, change);
        return;
    }
    // Behind those that wait already, so that the last word stays last.
    if (pending_.empty()) asio::post(io_, [this] { apply_pending(); });
    pending_.emplace_back(target, change);
}

void CoreRequests::apply_pending() {
    // A change may wake the driver, which asks for no change itself: the
    // list is not added to meanwhile, but it is taken whole all the same.
    auto pending = std::move(pending_);
    pending_.clear();
    for (const auto& [target, change] : pending)
        sched_.set_limit(target, change);
}

} // namespace cqmgr::qmgr
