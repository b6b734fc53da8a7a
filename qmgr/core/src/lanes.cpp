// Priority lanes: urgent mail before everything else of its transport.
//
// Rak's scheduler lets a small job preempt a big one once the big one has
// earned the slots; it cannot help when the mail in the way is many small
// jobs (a campaign of one-recipient messages), which it serves in enqueue
// order like any other small mail.  So urgent messages do not compete on
// the job list at all: each transport keeps its linked urgent jobs on a list
// of their own, in enqueue order, and an agent is offered the first entry
// of that list that a destination window lets go, before the job list is
// walked, whatever the current job's slots.  The same choice is made for a
// destination: an urgent entry takes the next free place in its queue's
// window.  Normal and bulk mail stay on Rak's job list as stock's mail.
//
// Two shares bound this, when the administrator sets them.  Both are
// work-conserving: a share binds only while mail of the other lane waits
// for an agent, so that it costs nothing on a transport where one lane
// alone has mail, and the agents go back as soon as the other lane waits
// (deliveries in flight are never cut short; each one that ends frees its
// agent for the lane that is owed it):
//   - urgent_share reserves floor(P x share / 100) agents (at most P - 1)
//     of the transport's process limit P (master.cf maxproc) for urgent
//     mail: while urgent mail waits for an agent (urgent_waits(): an entry
//     that a destination window lets go now), other mail with the rest or
//     more in flight gets no new agent, and select_transport() asks for no
//     connection that only other mail could use, so each agent that frees
//     goes to urgent mail.  While none waits, other mail may use the
//     reserve as well: a campaign alone has every agent, and an urgent
//     message that comes then takes the next agent that frees;
//   - bulk_share is the share of the transport's deliveries in flight that
//     other mail keeps while it has mail waiting: while it has less (none
//     at all, with urgent mail in flight), the job list is walked first,
//     past urgent jobs and without preemption, so a stream of urgent mail
//     cannot starve it; when that walk finds nothing to send, urgent mail
//     has the agent.  It is a share of what is in flight, not of P, so
//     that it holds where a destination's window, not the process limit,
//     is what the two compete for.
//
// The urgent list is walked entry by entry on each selection (jobs whose
// queues are at their windows are not marked as blockers), which is cheap
// because urgent mail is, by its nature, little of the mail.
#include "core.hpp"

#include <algorithm>

namespace cqmgr::core {

int lane_cap(const Transport& t) {
    int limit = t.cfg.process_limit;
    if (limit <= 0 || t.cfg.urgent_share <= 0) return -1;
    // Rounded down, and never the whole limit: other mail always has one.
    int reserved = std::min(limit * t.cfg.urgent_share / 100, limit - 1);
    return reserved > 0 ? limit - reserved : -1;
}

bool lane_owed(const Transport& t) {
    int other = lane_other_busy(t);
    int urgent = t.lane_busy[static_cast<int>(Lane::urgent)];
    return other * 100 < t.cfg.bulk_share * (other + urgent);
}

int lane_other_busy(const Transport& t) {
    return t.lane_busy[static_cast<int>(Lane::normal)] + t.lane_busy[static_cast<int>(Lane::bulk)];
}

bool lane_capped(const Transport& t) {
    int cap = lane_cap(t);
    return cap >= 0 && lane_other_busy(t) >= cap;
}

bool urgent_waits(const Transport& t) {
    ShareDemand demand; // share_room: computed once
    for (const Job& j : t.urgent_jobs)
        for (const Peer& p : j.peers) {
            const Queue& q = *p.queue;
            // As Selection::peer chooses, without reading more recipients.
            if (!p.entries.empty() && !p.held && !q.suspended && !q.limits.stopped() &&
                share_room(q, demand) > 0)
                return true;
        }
    return false;
}

bool lane_reserve_binds(const Transport& t) {
    return !t.urgent_jobs.empty() && lane_capped(t) && urgent_waits(t);
}

// Puts urgent job `j` (just linked) on its transport's urgent list, by
// enqueue time.
void lane_link(Job& j) {
    Transport& t = *j.transport;
    auto pos = t.urgent_jobs.end();
    while (pos != t.urgent_jobs.begin()) {
        auto prev = std::prev(pos);
        if (j.message->queued_time - prev->message->queued_time >= 0) break;
        pos = prev;
    }
    t.urgent_jobs.insert(pos, j);
}

// Takes job `j` (being unlinked) off the urgent list, if it is there.
void lane_unlink(Job& j) {
    if (j.lane_hook.is_linked())
        j.transport->urgent_jobs.erase(j.transport->urgent_jobs.iterator_to(j));
}

// The first urgent entry of `t` that a destination window lets go.
Entry* Selection::urgent(Transport& t) {
    for (auto it = t.urgent_jobs.begin(); it != t.urgent_jobs.end();) {
        Job& j = *it++;
        Peer* held = nullptr;
        if (Peer* p = job_peer(j, held)) {
            c_.trace([&] {
                return "lanes: " + j.message->id + " " + t.name + ": urgent, selected first (" +
                       std::to_string(lane_other_busy(t)) + " other deliveries in flight)";
            });
            // Rak's current job stays where it was.
            return take(*p, t.job_current);
        }
    }
    return nullptr;
}

// Selection on a transport with urgent jobs: see the top of this file.
Entry* Selection::lanes(Transport& t) {
    // Other mail first while it is owed its share, unless it is at its
    // cap (the reserve binds then, if urgent mail waits).
    if (lane_owed(t) && !lane_capped(t))
        if (Entry* e = walk(t, true)) return e;
    if (Entry* e = urgent(t)) return e;
    // No urgent entry may go now, so the reserve does not bind: the job
    // walk has the agent, beyond the cap if need be (and sends an entry
    // held for its refill, urgent or not, rather than none).
    return walk(t);
}

} // namespace cqmgr::core
