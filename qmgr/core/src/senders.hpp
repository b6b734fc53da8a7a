// Sender groups' limits (cqmgr_sender_limits) in the scheduler: the load
// each group has in each scope of a transport (SenderLoad), kept up to date
// as its entries wait, start and end, and what stops the group's jobs in
// the job walk (sender.cpp).
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <string>
#include <vector>

namespace cqmgr::core {

struct Core;

class Senders {
  public:
    explicit Senders(Core& c) : c_(c) {}

    // Scheduler::set_sender_limit.
    void set_limit(SenderGroup g, const SenderLimit& limit);
    // Peer `p`, of a message with a sender group, has no load yet: gives
    // it its group's load in its queue's scope, when the group has a limit
    // (Peer::sender).  The retry transport's mail is not limited: its
    // agent only defers it.
    void attach(Peer& p);
    // Peer `p`, which has no entries left, is going: its load loses it,
    // and goes too unless its rate still remembers recent starts.
    void detach(Peer& p);
    // A waiting entry of load `l` starts a delivery: it counts against
    // the concurrency, and takes a start from the rate.
    void started(SenderLoad& l);
    // A delivery of load `l` ended (or was given back): when a job was
    // passed over for it and it has room now, its transport's blockers go.
    void ended(SenderLoad& l);
    // Whether every waiting entry of job `j` is stopped by its group's
    // limits (the preemption candidate search passes it over); marks the
    // loads that stop it.
    bool job_stopped(const Job& j) const;
    // The timer of the load `key` of `t`, set for `due`, fired.
    void fire(Transport& t, const std::string& key, int64_t due);
    // Checks the loads of `t` against its queues' entries and peers.
    void check(const Transport& t) const;

  private:
    // Sets `l`'s timer for `due`, unless an earlier one is pending.
    void arm(Transport& t, SenderLoad& l, int64_t due);
    // What the rate of `l` allows now (SenderLoad::rate_room); when it
    // allows nothing, a timer for when it will.
    void rate_update(Transport& t, SenderLoad& l);
    // Frees `l`, which has no peers.
    void release(Transport& t, SenderLoad& l);

    Core& c_;
    std::vector<SenderLimit> limits_; // by group
};

// The key of the scope queue `q` is in for a limit counted `per`
// destination or provider.  For now it is the destination for both: the
// scheduler does not know providers (a provider's key would make one load
// span several queues, and the per-queue counts of SenderLoad would then
// have to move to a record per load and queue).
std::string sender_scope_key(const Queue& q, SenderPer per);

// How many starts a GCRA cell whose theoretical arrival time is `tat`
// allows at `now`, with `interval` seconds between starts and `burst`
// starts at once after a quiet spell: from 0 to `burst`.
int gcra_room(double tat, int64_t now, double interval, int64_t burst);

// The load of peer `p`, which has one (Peer::sender).
inline SenderLoad& sender_load(const Peer& p) {
    return p.job->transport->senders.at(p.sender);
}
// A waiting entry of peer `p` came (+1) or went (-1).  Inline: every
// entry passes here at each step, and stock's mail costs one branch.
inline void sender_todo(const Peer& p, int delta) {
    if (!p.sender) return;
    sender_load(p).todo += delta;
    p.queue->sender_todo += delta;
}
// Whether peer `p`'s group may start one more delivery in its scope;
// when not, its load remembers that a job was passed over for it.
inline bool sender_may_start(const Peer& p) {
    SenderLoad& l = sender_load(p);
    if (l.room() > 0) return true;
    l.blocked = true;
    return false;
}
// Waiting entries of queue `q`, not held back, that sender limits stop
// now: what select_transport() and destination_waits() do not count.
inline int sender_stopped(const Queue& q) {
    int n = 0;
    for (const SenderLoad& l : q.senders)
        n += l.stopped();
    return n;
}

} // namespace cqmgr::core
