// Destination shares (cqmgr_destination_agent_share): while other
// destinations of the transport want agents, one destination may have at
// most a share of its transport's process limit in flight, so that a
// destination that holds its agents for long (a tarpit, a receiver that
// times out) cannot take them from the others.  The share only bounds new
// selections, like an administrator's cap; deliveries in flight above it
// finish as they are.
//
// The share is work-conserving: a destination goes beyond its share, up to
// its other bounds (its concurrency window, caps, learned limits, gate),
// while no other destination of the transport wants the agents, so that
// turning shares on costs nothing on a quiet day and a backlog behind a
// slow destination still drains with agents that would otherwise stay
// idle.  Which other destinations make a share bind depends on what is
// known of the destination (share_kind):
//
//   whole     its full share, earned: binds while another destination
//             waits, i.e. has mail it could send within its own share.
//             Every destination keeps its share when it has mail; what is
//             left goes in the job list's order.
//   lowered   the daemon lowered it (a slow destination, a timeout: its
//             isolation policy, through Scheduler::set_limit): binds also
//             while a destination with a whole share wants an agent (has
//             mail, and room within its window beyond its share), so that
//             the agents a healthy destination gives back go to its own
//             mail rather than to a slow one that keeps them for long.
//   earning   slow start: a queue created on a transport with shares has
//             earned one agent of its share, and each delivery that goes
//             through doubles that (share_earn), up to the full share.
//             Until then its share is what it has earned, and binds while
//             any other destination wants an agent.  Nothing is known of a
//             new destination: without this, four new tarpits with a
//             share of 20 % would take 80 % of the agents for as long as
//             their first deliveries last.  Destinations that are all new
//             hold each other to their slow start for a delivery or two
//             of the fastest; a destination alone is never held.
//
// A lowered share is kept by name (LimitBook), as a learned limit is, so
// that a queue freed and created again keeps it; the slow start is the
// queue's own, and begins again with a new queue.  A probe share after a
// death (Limits::share_always) binds even while nobody wants an agent.
#include "cqmgr/core/scheduler.hpp"
#include "senders.hpp"

#include <algorithm>

namespace cqmgr::core {

int share_full(const Transport& t) {
    if (t.cfg.process_limit <= 0 || t.cfg.dest_share <= 0) return 0;
    return std::max(1, t.cfg.process_limit * t.cfg.dest_share / 100);
}

ShareKind share_kind(const Queue& q) {
    if (q.share_earned < q.limits.share) return share_earning;
    int full = share_full(*q.transport);
    return full == 0 || q.limits.share < full ? share_lowered : share_whole;
}

namespace {
// Whether `q` could use one more agent now, its share aside (mail that its
// sender group's limit stops gives an agent nothing).
bool wants_agent(const Queue& q) {
    return q.may_start() && q.selectable_count() > (q.sender_todo ? sender_stopped(q) : 0) &&
           q.open_window() > q.busy_count();
}
} // namespace

void ShareDemand::compute(const Transport& t) {
    known = true;
    waits = false;
    wants = whole_wants = 0;
    for (const Queue& q : t.queues_rr) {
        if (!wants_agent(q)) continue;
        ++wants;
        if (q.select_window() > q.busy_count()) waits = true;
        if (q.limits.share <= 0 || share_kind(q) == share_whole) ++whole_wants;
    }
}

bool destination_waits(const Transport& t) {
    ShareDemand d;
    d.compute(t);
    return d.waits;
}

bool share_binds(const Queue& q, const ShareDemand& d) {
    switch (share_kind(q)) {
    case share_earning:
        return d.wants > (wants_agent(q) ? 1 : 0);
    case share_lowered:
        return d.waits || d.whole_wants > 0;
    case share_whole:
        break;
    }
    return d.waits;
}

int share_room(const Queue& q, ShareDemand& d) {
    int busy = q.busy_count();
    int room = q.select_window() - busy;
    // Only a share that is what stops the queue is worth a look at the
    // others: the common case costs nothing more than before.
    if (room > 0 || q.limits.share <= 0) return room;
    int open = q.open_window() - busy;
    if (open <= 0) return room;
    if (!d.known) d.compute(*q.transport);
    return share_binds(q, d) ? room : open;
}

void share_earn(Queue& q) {
    int full = share_full(*q.transport);
    if (q.share_earned < full) q.share_earned = std::min(2 * q.share_earned, full);
}

} // namespace cqmgr::core
