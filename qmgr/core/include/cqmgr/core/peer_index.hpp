// A job's peers by queue.  The job keeps its peers in its round-robin list
// (Job::peers), which owns them; this index finds one by its queue.  Most
// jobs have one peer (a one-recipient message, or one destination), and a
// few are found fastest by walking that list; only a job with more than a
// few peers gets a hash table, from queue to peer.  So a job pays 16 bytes
// for the index until it needs one.
//
// The table is open addressing over one array of peer pointers (linear
// probing, at most half full), not a node-based map: a message to many
// destinations adds a peer per destination, and a node each was an
// allocation per recipient.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace cqmgr::core {

struct Peer;
struct Queue;

class PeerIndex {
  public:
    PeerIndex();
    ~PeerIndex();
    PeerIndex(const PeerIndex&) = delete;
    PeerIndex& operator=(const PeerIndex&) = delete;

    // The peer for queue `q` among `peers` (the job's list), or null.
    template <class List> Peer* find(const List& peers, const Queue* q) const {
        if (table_) return find_indexed(q);
        for (const auto& p : peers)
            if (p.queue == q) return const_cast<Peer*>(&p);
        return nullptr;
    }
    // `p` has just joined `peers`; its queue had no peer there.
    template <class List> void added(const List& peers, Peer& p) {
        ++count_;
        if (!table_) {
            if (count_ > few) rebuild(peers, 32);
        } else if (2 * count_ > mask_ + 1) {
            // At most half full, so that probes stay short.
            rebuild(peers, 2 * (mask_ + 1));
        } else {
            insert(&p);
        }
    }
    // `p` is about to leave the job's list.
    void leaving(const Peer& p);
    // How many peers the job has.
    size_t size() const { return count_; }

  private:
    // Beyond this many peers, lookups go through the hash table.
    static constexpr uint32_t few = 8;

    Peer* find_indexed(const Queue* q) const;
    // The slot where probing for `q` starts.
    uint32_t home(const Queue* q) const;
    // The slot holding `q`'s peer, or the empty slot where it would go.
    uint32_t slot_of(const Queue* q) const;
    // A table of `slots` slots (a power of two) holding every peer.
    template <class List> void rebuild(const List& peers, uint32_t slots) {
        table_ = std::make_unique<Peer*[]>(slots); // all empty
        mask_ = slots - 1;
        for (const auto& p : peers)
            insert(const_cast<Peer*>(&p));
    }
    void insert(Peer* p);
    // Empties slot `s`, moving later entries of its run back.
    void remove_slot(uint32_t s);

    uint32_t count_ = 0;
    uint32_t mask_ = 0; // the table's slots - 1
    std::unique_ptr<Peer*[]> table_;
};

} // namespace cqmgr::core
