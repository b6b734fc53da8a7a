// The jobs of a transport: Rak's preemptive scheduling on the job list,
// the per-transport recipient pools (slots lent to jobs and moved on to the
// next job with unread recipients), blockers (jobs whose destinations are
// all at their windows), and reading more recipients of a job's message.
// Which entry an agent gets is chosen by Selection, on these lists.
#pragma once

#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

struct Core;

class Jobs {
  public:
    explicit Jobs(Core& c) : c_(c) {}

    // Message `m`'s job on `t`, made and linked as needed; it is no
    // blocker any more (new entries may change that).
    Job& obtain(Message& m, Transport& t);
    // Clears job `j`'s blocker mark, if it has one.
    void unblock(Job& j);
    // Puts `j` on its transport's job lists by enqueue time.
    void link(Job& j);
    // Takes `j` off its transport's job lists.
    void unlink(Job& j);
    // Takes `j`, with nothing in core for now, off the job lists until it
    // gets entries again.
    void retire(Job& j);
    // Frees `j` (its message is done).
    void free(Job& j);
    // Gives `j`'s unused recipient slots back to its transport's pool and
    // on to the next job with unread recipients.
    void move_limits(Job& j);
    // An entry of `j` was selected: it earns its share of a slot.  Inline,
    // as is refill()'s first test: both run at every selection.
    void count_slots(Job& j) {
        j.slots_available++;
        j.slots_used++;
        // A job other than the one the cache was computed for got a bit
        // more likely to be a candidate.
        if (&j != j.transport->candidate_cache_current) j.transport->reset_candidate_cache();
    }
    // The job that should preempt `current`, if any (cached per current
    // job and time).
    Job* candidate(Job& current);
    // The job to select from instead of `current`: one that preempts it,
    // or `current`.
    Job* preempt(Job& current);
    // Moves `j` in front of `parent` on the job list, as its stack child.
    void push(Job& j, Job& parent);
    // Takes `j` off its preemption stack.
    void pop(Job& j);
    // Asks the driver for more recipients of `j`'s message when it is
    // time: when it has unread recipients, entries in core and no refill
    // under way, and refill_if_due() finds it due.
    void refill(Job& j, bool any_room) {
        const Message& m = *j.message;
        if (m.has_unread && m.refcount > 0 && !m.refill_pending) refill_if_due(j, any_room);
    }
    // Marks `j`, whose entries are all held back by destination windows, a
    // blocker, and its busy queues with it.
    void block(Job& j);
    // `q` may have room again: when it was blocking jobs, free them all.
    void blocker_update(Queue& q);
    // Jobs held back by destination shares may go again once the other
    // queues of `t` no longer make those shares bind (share.cpp); `d` is
    // computed when needed, for the caller to use further.
    void share_update(Transport& t, ShareDemand& d);
    // Unmarks every blocker of `t`: selection finds the real current job
    // again (a queue or a sender group that stopped them has room).
    void unblock_all(Transport& t);

  private:
    // refill() past its first test: reads when the refill is due.
    void refill_if_due(Job& j, bool any_room);
    // The reference candidate search: stock's walk of the job list.
    Job* candidate_scan(Job& current, int max_slots);

    Core& c_;
};

// Gives job `j`, just placed on its transport's job list, a position label
// between its neighbours' (job_order.cpp).
void job_order_assign(Job& j);

// The most recipients read in one batch.
inline constexpr int max_batch = 5000;
// How many recipients to read in a later batch of `m` (Scheduler::
// reread_limit).
int message_reread_limit(const Message& m);

// Brings job `j`'s candidate index membership in line with its state.
inline void index_refresh(Job& j) {
    j.transport->candidates.refresh(j);
}
// Takes job `j` out of its transport's candidate index.
inline void index_forget(Job& j) {
    j.transport->candidates.forget(j);
}

} // namespace cqmgr::core
