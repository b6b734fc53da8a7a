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
    pending_.push_back({target, change});
}

void CoreRequests::set_sender_rule(const core::AdminTarget& target, core::SenderGroup g,
                                   const std::optional<core::RuleLimit>& rule) {
    if (!sched_.in_callback() && pending_.empty()) {
        sched_.set_sender_rule(target, g, rule);
        return;
    }
    if (pending_.empty()) asio::post(io_, [this] { apply_pending(); });
    pending_.push_back({target, core::LimitChange::rule(rule), g});
}

void CoreRequests::apply_pending() {
    // A change may wake the driver, which asks for no change itself: the
    // list is not added to meanwhile, but it is taken whole all the same.
    auto pending = std::move(pending_);
    pending_.clear();
    for (const Pending& p : pending)
        if (p.group)
            sched_.set_sender_rule(p.target, p.group, p.change.value.rule);
        else
            sched_.set_limit(p.target, p.change);
}

} // namespace cqmgr::qmgr
