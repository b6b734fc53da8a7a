// Rak's walk of the job list: which entry an agent of a transport gets
// next, from the current job (after it may have been preempted) on.
#include "core.hpp"

namespace cqmgr::core {

// The peer of job `j` whose entry goes next, reading more recipients first
// when it is time.  `held` is set to the first peer with room that was
// passed over because its entry is held back for the refill
// (peer_hold_update).
Peer* Selection::job_peer(Job& j, Peer*& held) {
    c_.jobs.refill(j, false);
    if (j.has_entries())
        if (Peer* p = peer(j, held)) return p;
    c_.jobs.refill(j, true);
    // A driver that reads at once has assigned the batch already.
    if (j.has_entries())
        if (Peer* p = peer(j, held)) return p;
    return nullptr;
}

// The first peer of job `j` whose queue has room and that has waiting
// entries; rotates so that the job's destinations take turns.  A peer
// whose entry is held back for a refill is passed over (the first one is
// kept in `held`).
Peer* Selection::peer(Job& j, Peer*& held) {
    for (auto it = j.peers.begin(); it != j.peers.end(); ++it) {
        Queue& q = *it->queue;
        if (it->entries.empty() || q.suspended || q.limits.stopped()) continue;
        // A sender group at its limit here: other senders' mail goes ahead.
        if (it->sender && !sender_may_start(*it)) continue;
        if (share_room(q, demand_) <= 0) continue;
        if (it->held) {
            if (!held) held = &*it;
            continue;
        }
        Peer& p = *it;
        if (std::next(it) != j.peers.end())
            j.peers.splice(j.peers.end(), j.peers, j.peers.begin(), std::next(it));
        return &p;
    }
    return nullptr;
}

Entry* Selection::select_entry(Transport& t) {
    // A transport suspended since its connection was granted gets nothing.
    Entry* e = nullptr;
    demand_ = {};
    c_.jobs.share_update(t, demand_);
    if (!t.hold) e = t.urgent_jobs.empty() ? walk(t) : lanes(t);
    // Nothing to send: release the rate lock so the transport is not stalled.
    if (!e) t.rate_locked = false;
    return e;
}

// Walks the job list from the current job (after trying to preempt it):
// blockers are skipped, a job whose queues are all at their window is
// marked a blocker, a job with nothing in core is retired, and the first
// job with a selectable peer gives its peer's oldest entry.
//
// A job whose only usable entries are held back for its refill is neither:
// its queues have room.  Stock would have read the refill and sent the
// entry, so that job stays the current one (selection resumes there, and
// no job before the current one is ever anything but a blocker); the walk
// goes on past it.  select_transport() does not count held entries, so an
// agent finds only held ones when this very walk asked for their refill
// (or when one arrived during a transport rate delay): then the first of
// them goes as it is, rather than leaving the agent without a request.
//
// With `skip_urgent` (lanes.cpp: mail other than urgent is owed its share)
// urgent jobs are passed over and no job is preempted.
Entry* Selection::walk(Transport& t, bool skip_urgent) {
    Job* job = t.job_current;
    if (!job) return nullptr;
    if (t.cfg.policy == SchedulerPolicy::finch) {
        // Jobs within their share first; the walk below, without
        // preemption, gives the agent to the oldest job otherwise.
        if (Entry* e = finch(t, skip_urgent)) return e;
        job = t.job_current;
        if (!job) return nullptr;
    } else if (t.cfg.slot_cost >= 2 && !skip_urgent) {
        job = c_.jobs.preempt(*job);
    }
    Job* first_held = nullptr;
    Peer* held_peer = nullptr;
    while (job) {
        auto next_it = std::next(t.job_list.iterator_to(*job));
        Job* next = next_it == t.job_list.end() ? nullptr : &*next_it;
        if (t.is_blocker(*job) || (skip_urgent && job->message->lane == Lane::urgent)) {
            job = next;
            continue;
        }
        Peer* held = nullptr;
        if (Peer* p = job_peer(*job, held)) return take(*p, first_held);
        if (held) {
            if (!first_held) first_held = job, held_peer = held;
        } else if (job->has_entries()) {
            c_.jobs.block(*job);
        } else {
            // Nothing in core for now ("stalled"): off the lists until refilled.
            c_.trace([&] { return "qmgr_job_retire: " + job->message->id; });
            c_.jobs.retire(*job);
        }
        job = next;
    }
    t.job_current = first_held;
    // Urgent mail may still go (the caller asks next): a held entry can wait.
    if (skip_urgent || !held_peer || held_peer->entries.empty()) return nullptr;
    if (held_peer->held) t.early_entries++;
    return take(*held_peer, first_held);
}

// Selects peer `p`'s oldest entry for delivery; selection resumes at
// `resume`, or at `p`'s job.
Entry* Selection::take(Peer& p, Job* resume) {
    Job& job = *p.job;
    Transport& t = *job.transport;
    Entry* e = &p.entries.front();
    c_.trace([&] {
        return "qmgr_peer_select: " + job.message->id + " " + t.name + " " + p.queue->name + " (" +
               std::to_string(e->rcpts.size()) + " recipients, window " +
               std::to_string(p.queue->window) + ", busy " + std::to_string(p.queue->busy_count()) +
               ")";
    });
    c_.entries.select(e);
    c_.jobs.count_slots(job);
    t.job_current = resume ? resume : &job;
    if (!job.has_entries() && !job.message->has_unread) c_.jobs.retire(job);
    return e;
}
} // namespace cqmgr::core
