// A job's peers by queue.  Most jobs have one peer (a one-recipient
// message, or one destination); a hash table per job cost some 200 bytes
// for it.  So the peers live in a vector searched in order, and only a
// job with more than a few peers also gets a hash table from queue to
// position.  The index owns its peers.
//
// The table is open addressing over one array of positions (linear
// probing, at most half full), not a node-based map: a message to many
// destinations adds a peer per destination, and a node each was an
// allocation per recipient.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace cqmgr::core {

struct Peer;
struct Queue;

class PeerIndex {
  public:
    PeerIndex();
    ~PeerIndex();
    PeerIndex(const PeerIndex&) = delete;
    PeerIndex& operator=(const PeerIndex&) = delete;

    // The peer for queue `q`, or null.
    Peer* find(const Queue* q) const;
    // Adds `p` (its queue not yet indexed) and returns it.
    Peer& add(std::unique_ptr<Peer> p);
    // Destroys the peer for queue `q`.
    void erase(const Queue* q);
    // Calls f(Peer&) for every peer, in no particular order.
    template <class F> void for_each(F f) const {
        for (const auto& p : peers_)
            f(*p);
    }
    size_t size() const { return peers_.size(); }

  private:
    // Beyond this many peers, lookups go through the hash table.
    static constexpr size_t few = 8;
    size_t position(const Queue* q) const; // size() when absent

    // The hash table: table_[0] is the mask (slots - 1), table_[1 + i] is
    // slot i, holding a position + 1 (0: empty).
    uint32_t mask() const { return table_[0]; }
    uint32_t& slot(uint32_t i) const { return table_[1 + i]; }
    // The slot where probing for `q` starts.
    uint32_t home(const Queue* q) const;
    // The slot holding `q`'s position (q indexed).
    uint32_t slot_of(const Queue* q) const;
    // Indexes every peer in a table of `slots` slots (a power of two).
    void rebuild(uint32_t slots);
    // Indexes position `i` (its queue not yet indexed).
    void insert(uint32_t i);
    // Empties slot `s`, moving later entries of its run back.
    void remove_slot(uint32_t s);

    // The first peer is held in place: most jobs have no other.
    boost::container::small_vector<std::unique_ptr<Peer>, 1> peers_;
    std::unique_ptr<uint32_t[]> table_;
};

} // namespace cqmgr::core
