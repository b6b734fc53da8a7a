// Destination shares (cqmgr_destination_agent_share): while other
// destinations of the transport wait for an agent, one destination may
// have at most a share of its transport's process limit in flight, so that
// a destination that holds its agents for long (a tarpit, a receiver that
// times out) cannot take them from the others.  The share only bounds new
// selections, like an administrator's cap; deliveries in flight above it
// finish as they are.
//
// The share is work-conserving: while no other destination of the
// transport has mail it could send now, a destination may go beyond its
// share up to its other bounds (its concurrency window, caps, learned
// limits, gate), so that turning shares on costs nothing on a quiet day
// and a backlog behind a slow destination still drains with agents that
// would otherwise stay idle.  As soon as another destination has mail
// waiting, the share binds again and the agents the destination holds
// beyond it go to the others as its deliveries end.
//
// The daemon lowers a destination's share below the transport's when the
// destination is slow or times out, and gives it back later (the
// daemon's isolation policy, through Scheduler::set_limit); the lowered
// share is kept by name (LimitBook), as a learned limit is, so that a
// queue freed and created again keeps it.
#include "cqmgr/core/scheduler.hpp"
#include "senders.hpp"

#include <algorithm>

namespace cqmgr::core {

int share_full(const Transport& t) {
    if (t.cfg.process_limit <= 0 || t.cfg.dest_share <= 0) return 0;
    return std::max(1, t.cfg.process_limit * t.cfg.dest_share / 100);
}

bool destination_waits(const Transport& t) {
    for (const Queue& q : t.queues_rr)
        if (q.may_start() && q.selectable_count() > (q.sender_todo ? sender_stopped(q) : 0) &&
            q.select_window() > q.busy_count())
            return true;
    return false;
}

int share_room(const Queue& q, int8_t& waits) {
    int busy = q.busy_count();
    int room = q.select_window() - busy;
    // Only a share that is what stops the queue is worth a look at the
    // others: the common case costs nothing more than before.
    if (room > 0 || q.limits.share <= 0) return room;
    int open = q.open_window() - busy;
    if (open <= 0) return room;
    if (waits < 0) waits = destination_waits(*q.transport) ? 1 : 0;
    return waits ? room : open;
}

} // namespace cqmgr::core
