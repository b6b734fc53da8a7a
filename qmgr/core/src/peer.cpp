// Peers: one job's entries for one queue.
#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

Peer& Scheduler::peer_obtain(Job& j, Queue& q) {
    auto& slot = j.peer_by_queue[&q];
    if (!slot) {
        slot = std::make_unique<Peer>();
        slot->job = &j;
        slot->queue = &q;
        j.peers.push_back(*slot);
    }
    return *slot;
}

Peer* Scheduler::peer_select(Job& j) {
    // First peer whose queue has room and that has waiting entries; rotate so
    // the job's destinations take turns.
    for (auto it = j.peers.begin(); it != j.peers.end(); ++it) {
        Queue& q = *it->queue;
        if (q.window > q.busy_count() && !q.suspended && !it->entries.empty()) {
            Peer& p = *it;
            if (std::next(it) != j.peers.end())
                j.peers.splice(j.peers.end(), j.peers, j.peers.begin(), std::next(it));
            return &p;
        }
    }
    return nullptr;
}

void Scheduler::peer_free(Peer& p) {
    if (p.refcount != 0 || !p.entries.empty()) panic("peer_free: peer still has entries");
    Job& j = *p.job;
    j.peers.erase(j.peers.iterator_to(p));
    j.peer_by_queue.erase(p.queue); // destroys p
}

} // namespace cqmgr::core
