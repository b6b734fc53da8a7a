// Destination shares (cqmgr_destination_agent_share): one destination may
// have at most a share of its transport's process limit in flight, so that
// a destination that holds its agents for long (a tarpit, a receiver that
// times out) cannot take all of them from the others.  The share only
// bounds new selections, like an administrator's cap (select_window());
// deliveries in flight above a lowered share finish as they are.
//
// The daemon lowers a destination's share below the transport's when the
// destination is slow or times out, and gives it back later (the
// daemon's isolation policy); the lowered share is kept by name, as a
// learned limit is, so that a queue freed and created again keeps it.
#include "cqmgr/core/scheduler.hpp"

#include <algorithm>

namespace cqmgr::core {

int share_full(const Transport& t) {
    if (t.cfg.process_limit <= 0 || t.cfg.dest_share <= 0) return 0;
    return std::max(1, t.cfg.process_limit * t.cfg.dest_share / 100);
}

bool Scheduler::share_set(const AdminTarget& target, int agents) {
    if (target.transport.empty() || target.queue.empty())
        panic("share_set: target " + target.text() + " is not one queue");
    if (agents < 0) panic("share_set: negative share for " + target.text());
    auto it = shares_.find(target);
    if (agents == 0) {
        if (it == shares_.end()) return false;
        shares_.erase(it);
    } else if (it == shares_.end()) {
        shares_.emplace(target, agents);
    } else if (it->second == agents) {
        return false;
    } else {
        it->second = agents;
    }
    trace([&] { return "share_set: " + target.text() + " " + std::to_string(agents); });
    admin_changed(target);
    return true;
}

// The share of queue `queue` of transport `t`: the lower of the
// transport's and the lowered one, whichever are set; 0 = none.
int Scheduler::share_for(const Transport& t, const std::string& queue) const {
    int full = share_full(t);
    if (shares_.empty()) return full;
    auto it = shares_.find(AdminTarget{t.name, queue});
    if (it == shares_.end()) return full;
    return full > 0 ? std::min(full, it->second) : it->second;
}

} // namespace cqmgr::core
