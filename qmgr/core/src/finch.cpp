// The finch policy (cqmgr_scheduler_policy = finch): each job's concurrency
// scaled by the free agents, after Tony Finch's scheduler design, instead of
// Rak's preemption with delivery slots.
//
// Rak's scheduler serves jobs first come, first served, and lets a smaller
// job jump ahead of the current one once that one has earned enough slots.
// Finch's observation is that neither a fixed per-message limit nor an equal
// share per message is right: a big message should be able to use most of
// an idle transport, but not all of it while other mail waits, and its
// share should shrink as the load grows.  So a job may take one more
// delivery while its deliveries in flight are fewer than
//
//   finch_message_concurrency (a floor every job gets), or
//   finch_scale x the places that would still be free after this one,
//
// counted in each pool the delivery draws from: the transport's agents
// (its process limit, when known) and the entry's destination window.  With
// the scale at 10, one job alone may fill about 10/11 of a pool, two jobs
// about 10/21 each, N jobs about 10/(10N+1) each; the place a job over its
// share leaves goes to the oldest job within its share.
//
// Postfix's agents are processes, not pipelined connections, so an agent
// that no job within its share can use is not left idle while mail waits:
// it goes to the oldest job anyway (Finch's "free ride" for a job that may
// not open a connection of its own), by the plain first-come, first-served
// walk without preemption (selection.cpp).  The shares therefore decide who gets
// a freed place, not whether it is used: a big message alone uses every
// agent; a small message that arrives behind it takes the next place freed
// (it has none in flight, within the floor), as it would by preemption in
// Rak's scheduler, but without waiting for the big one to earn slots.
//
// Jobs below the floor are served first, in a walk of their own.  When
// several places free at once (the agents often finish together, and a
// slow daemon reads their replies in one go), one walk by share alone
// would give the older jobs every place but the last: with a window of 4
// and the scale at 10, a job is within its share while one place stays
// free after it, so the big message takes three places, the next job the
// fourth, and a small message behind them none, batch after batch.  The
// floor is what every job is owed, so it goes first.
//
// The walk is first come, first served over the job list, which the policy
// never reorders (no preemption); jobs whose destinations are all at their
// windows are marked as blockers, as the Rak walk does, so that later
// selections skip them until a place frees.
#include "core.hpp"

namespace cqmgr::core {

namespace {

// True when a job with `used` deliveries in flight in a pool may take one
// more, with `free_after` places of that pool still free after it.
bool within_share(const TransportConfig& c, int used, int free_after) {
    return used < c.finch_message_concurrency || used < c.finch_scale * free_after;
}

// True when job `j` may take one more of its transport's agents.
bool agents_allow(const Job& j) {
    const Transport& t = *j.transport;
    if (t.cfg.process_limit <= 0) return true; // unknown: only the windows count
    int busy = 0;
    for (int n : t.lane_busy)
        busy += n;
    return within_share(t.cfg, j.in_flight, t.cfg.process_limit - busy - 1);
}

} // namespace

// The first job, first come, first served from the current one, with an
// entry its share lets go now, jobs below the floor first; nullptr when
// there is none (the caller's walk then serves the oldest job).  With
// `skip_urgent`, urgent jobs are passed over (lanes.cpp).
Entry* Selection::finch(Transport& t, bool skip_urgent) {
    if (Entry* e = finch_walk(t, skip_urgent, true)) return e;
    return finch_walk(t, skip_urgent, false);
}

// One walk of finch(): with `floor_only`, only jobs with fewer
// deliveries in flight than the floor are considered.
Entry* Selection::finch_walk(Transport& t, bool skip_urgent, bool floor_only) {
    for (auto it = t.job_list.iterator_to(*t.job_current); it != t.job_list.end();) {
        Job& j = *it++;
        if (t.is_blocker(j) || !j.has_entries()) continue;
        if (skip_urgent && j.message->lane == Lane::urgent) continue;
        if (floor_only && j.in_flight >= t.cfg.finch_message_concurrency) continue;
        if (!agents_allow(j)) continue;
        // As the Rak walk does, before looking at the peers: a refill read
        // at once may add entries, one read later holds a short one back.
        c_.jobs.refill(j, false);
        bool blocked = true;
        Peer* p = finch_peer(j, blocked);
        if (blocked) c_.jobs.block(j);
        if (!p) continue;
        c_.trace([&] {
            return "finch: " + j.message->id + " " + t.name + " " + p->queue->name +
                   ": within its share (" + std::to_string(j.in_flight) + " in flight, " +
                   std::to_string(p->queue->busy_count()) + " of window " +
                   std::to_string(p->queue->select_window()) + " busy)";
        });
        return take(*p, t.job_current);
    }
    return nullptr;
}

// The first peer of job `j` whose entry may go now within the job's share
// of its destination's window; rotates so that the job's destinations take
// turns.  `blocked` is cleared when some peer's queue has room for one of
// its waiting entries (even one held back for a refill, or one beyond the
// share).
Peer* Selection::finch_peer(Job& j, bool& blocked) {
    for (auto it = j.peers.begin(); it != j.peers.end(); ++it) {
        Queue& q = *it->queue;
        if (q.suspended || q.limits.stopped() || it->entries.empty()) continue;
        if (it->sender && !sender_may_start(*it)) continue;
        int room = share_room(q, demand_);
        if (room <= 0) continue;
        blocked = false;
        int in_flight = it->refcount - static_cast<int>(it->entries.size());
        if (it->held || !within_share(j.transport->cfg, in_flight, room - 1)) continue;
        Peer& p = *it;
        if (std::next(it) != j.peers.end())
            j.peers.splice(j.peers.end(), j.peers, j.peers.begin(), std::next(it));
        return &p;
    }
    return nullptr;
}

} // namespace cqmgr::core
