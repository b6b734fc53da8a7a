// Entries and peers: a message's recipients for one queue, grouped into
// the entries one delivery request carries, from their creation to their
// end; the refill hold (a peer's only waiting entry, not full, waits while
// the message's next batch is read); the clog warning.
#pragma once

#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

struct Core;

class Entries {
  public:
    explicit Entries(Core& c) : c_(c) {}

    // Scheduler::assign.
    void assign(Message& m, Queue& q, Recipient r);
    // A new, empty entry of `m` for peer `p`.
    Entry* create(Peer& p, Message& m);
    // Moves `e` from waiting to in delivery.
    void select(Entry* e);
    enum class Which { todo, busy };
    // Frees entry `e`, waiting (todo) or in delivery (busy); `unseen`: a
    // busy entry's delivery never reached the receiver
    // (DeliveryResult::unseen).
    void done(Entry* e, Which which, bool unseen = false);
    // Scheduler::entry_unselect.
    void unselect(Entry* e);

  private:
    // Warns when one destination holds too much of the active queue.
    void clog_check(Queue& q);

    Core& c_;
};

// Peers (peer.cpp): job `j`'s peer for `q`, made when new.
Peer& peer_obtain(Job& j, Queue& q);
// Frees `p`, which has no entries left.
void peer_free(Peer& p);
// Brings `p`'s refill hold up to date (Peer::held).  Inline: most of the
// time no refill is under way and nothing is held, and peer_hold_renew()
// does the rest.
void peer_hold_renew(Peer& p);
inline void peer_hold_update(Peer& p) {
    if (p.job->message->refill_pending || p.held) peer_hold_renew(p);
}
// The same for every peer of `m`, whose refill_pending changed.
void message_hold_update(Message& m);

} // namespace cqmgr::core
