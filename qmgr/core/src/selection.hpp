// Which entry an agent of a transport gets next: Rak's walk of the job list
// (selection.cpp), urgent mail first within the lanes' shares (lanes.cpp),
// or each job within its share of the free agents (finch.cpp).
#pragma once

#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

struct Core;

class Selection {
  public:
    explicit Selection(Core& c) : c_(c) {}

    // Scheduler::select_entry.
    Entry* select_entry(Transport& t);

  private:
    // selection.cpp
    // Walks the job list from the current job (after trying to preempt
    // it); with `skip_urgent`, past urgent jobs and without preemption.
    Entry* walk(Transport& t, bool skip_urgent = false);
    // The peer of job `j` whose entry goes next, reading more recipients
    // first when it is time; `held` is set to the first peer passed over
    // because its entry is held back for the refill.
    Peer* job_peer(Job& j, Peer*& held);
    // The first peer of `j` whose queue has room, round-robin.
    Peer* peer(Job& j, Peer*& held);
    // Selects peer `p`'s oldest entry; selection resumes at `resume`, or
    // at `p`'s job.
    Entry* take(Peer& p, Job* resume);
    // lanes.cpp
    Entry* urgent(Transport& t);
    Entry* lanes(Transport& t);
    // finch.cpp
    Entry* finch(Transport& t, bool skip_urgent);
    Entry* finch_walk(Transport& t, bool skip_urgent, bool floor_only);
    Peer* finch_peer(Job& j, bool& blocked);

    Core& c_;
    // What the queues of the transport being selected for want, computed
    // at most once per selection (share_room).
    ShareDemand demand_;
};

// Lane bookkeeping (lanes.cpp).  Puts urgent job `j` (just linked) on its
// transport's urgent list, by enqueue time.
void lane_link(Job& j);
// Takes job `j` (being unlinked) off the urgent list, if it is there.
void lane_unlink(Job& j);
// Entry `e` joined (+1) or left (-1) its queue's waiting entries.  Inline:
// every entry passes here at each step.
inline void lane_todo(const Entry& e, int delta) {
    if (e.message->lane == Lane::urgent) e.queue->urgent_todo += delta;
}
// Entry `e` started (+1) or ended (-1) a delivery.
inline void lane_busy(const Entry& e, int delta) {
    e.queue->transport->lane_busy[static_cast<int>(e.message->lane)] += delta;
}
// Checks the lane counts and the urgent list of `t` from scratch
// (invariants.cpp).
void check_lanes(const Transport& t);

} // namespace cqmgr::core
