// A job's peer index finds each peer by its queue, with few peers (walking
// the job's list) and many (with the hash table), while peers come and go.
#include "cqmgr/core/peer_index.hpp"
#include "cqmgr/core/structures.hpp"

#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <random>
#include <vector>

namespace cqmgr::core {
namespace {

// A job's peer list and its index, as the scheduler keeps them.
struct Peers {
    UncountedList<Peer, &Peer::job_hook> list;
    PeerIndex index;
    std::map<const Queue*, std::unique_ptr<Peer>> owned;

    ~Peers() { list.clear(); }
    Peer* add(Queue* q) {
        auto p = std::make_unique<Peer>();
        p->queue = q;
        Peer* raw = p.get();
        owned[q] = std::move(p);
        list.push_back(*raw);
        index.added(list, *raw);
        return raw;
    }
    void erase(const Queue* q) {
        auto it = owned.find(q);
        if (it == owned.end()) return;
        index.leaving(*it->second);
        list.erase(list.iterator_to(*it->second));
        owned.erase(it);
    }
    Peer* find(const Queue* q) const { return index.find(list, q); }
    // Every queue of `queues` finds its peer, and only those with one.
    void check(const std::vector<std::unique_ptr<Queue>>& queues) const {
        ASSERT_EQ(index.size(), owned.size());
        for (const auto& q : queues) {
            auto it = owned.find(q.get());
            ASSERT_EQ(find(q.get()), it == owned.end() ? nullptr : it->second.get());
        }
    }
};

TEST(PeerIndex, FindsPeersWhileTheyComeAndGo) {
    std::vector<std::unique_ptr<Queue>> queues;
    for (int i = 0; i < 40; ++i)
        queues.push_back(std::make_unique<Queue>());
    Peers peers;
    // Up and down across the point where the hash table comes in, twice.
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 40; ++i) {
            peers.add(queues[(i * 7 + round) % 40].get());
            peers.check(queues);
        }
        for (int i = 0; i < 40; ++i) {
            peers.erase(queues[(i * 13 + 5) % 40].get());
            peers.check(queues);
        }
        peers.check(queues);
    }
}

// Many peers (a message to thousands of destinations), added and erased in
// a random order: every lookup still finds its peer, also after the
// table grows and entries are moved back over erased ones.
TEST(PeerIndex, ManyPeersInRandomOrder) {
    constexpr int n = 3000;
    std::vector<std::unique_ptr<Queue>> queues;
    for (int i = 0; i < n; ++i)
        queues.push_back(std::make_unique<Queue>());
    Peers peers;
    std::mt19937 rng(17);
    for (int step = 0; step < 40000; ++step) {
        Queue* q = queues[rng() % n].get();
        bool add = peers.owned.size() < n / 2 ? rng() % 3 != 0 : rng() % 3 == 0;
        if (add && !peers.owned.contains(q))
            peers.add(q);
        else if (!add)
            peers.erase(q);
        if (step % 997 == 0 || step > 39000) peers.check(queues);
    }
    // Down to none, and up again.
    for (const auto& q : queues)
        peers.erase(q.get());
    EXPECT_EQ(peers.index.size(), 0u);
    for (int i = 0; i < 100; ++i)
        peers.add(queues[i].get());
    peers.check(queues);
}

} // namespace
} // namespace cqmgr::core
