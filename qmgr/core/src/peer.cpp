// Peers: one job's entries for one queue.
#include "core.hpp"

namespace cqmgr::core {

Peer& peer_obtain(Job& j, Queue& q) {
    if (Peer* p = j.peer_by_queue.find(j.peers, &q)) return *p;
    Peer& p = *new Peer; // owned by j.peers from here on
    p.job = &j;
    p.queue = &q;
    j.peers.push_back(p);
    j.peer_by_queue.added(j.peers, p);
    return p;
}

void peer_free(Peer& p) {
    if (p.refcount != 0 || !p.entries.empty()) panic("peer_free: peer still has entries");
    if (p.held) panic("peer_free: peer still holds an entry back");
    Job& j = *p.job;
    j.peer_by_queue.leaving(p);
    j.peers.erase(j.peers.iterator_to(p));
    delete &p;
}

// Stock reads a refill synchronously, so the refilled recipients top up the
// entry that is about to go.  Ours arrives later; until it does, a peer's
// only waiting entry, if it is not full, is held back.  Its queue counts it,
// so that select_transport() asks for no connection that only a held entry
// could use.  Called whenever the peer's entries, the fill of its last
// entry or its message's refill_pending change.
void peer_hold_renew(Peer& p) {
    const Message& m = *p.job->message;
    Entry* want = nullptr;
    if (m.refill_pending && p.entries.size() == 1) {
        int limit = m.single_rcpt ? 1 : p.job->transport->cfg.dest_recipient_limit;
        Entry& e = p.entries.front();
        if (limit == 0 || static_cast<int>(e.rcpts.size()) < limit) want = &e;
    }
    if (p.held == want) return;
    int delta = (want != nullptr) - (p.held != nullptr);
    p.queue->held += delta;
    if (p.sender) sender_part(p).held += delta;
    p.held = want;
}

// Message `m`'s refill_pending changed: update all its peers.
void message_hold_update(Message& m) {
    for (Job* j : m.jobs)
        for (Peer& p : j->peers)
            peer_hold_update(p);
}

} // namespace cqmgr::core
