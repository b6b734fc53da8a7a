// A job's peers by queue.  Most jobs have one peer (a one-recipient
// message, or one destination); a hash table per job cost some 200 bytes
// for it.  So the peers live in a vector searched in order, and only a
// job with more than a few peers also gets a hash table from queue to
// position.  The index owns its peers.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <memory>
#include <unordered_map>
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

    // The first peer is held in place: most jobs have no other.
    boost::container::small_vector<std::unique_ptr<Peer>, 1> peers_;
    std::unique_ptr<std::unordered_map<const Queue*, size_t>> by_queue_;
};

} // namespace cqmgr::core
