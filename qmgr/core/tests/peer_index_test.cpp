// A job's peer index finds each peer by its queue, with few peers (the
// vector alone) and many (with the hash table), while peers come and go.
#include "cqmgr/core/peer_index.hpp"
#include "cqmgr/core/structures.hpp"

#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <random>
#include <vector>

namespace cqmgr::core {
namespace {

TEST(PeerIndex, FindsPeersWhileTheyComeAndGo) {
    std::vector<std::unique_ptr<Queue>> queues;
    for (int i = 0; i < 40; ++i)
        queues.push_back(std::make_unique<Queue>());
    PeerIndex index;
    std::map<const Queue*, Peer*> want;
    auto check = [&] {
        EXPECT_EQ(index.size(), want.size());
        for (const auto& q : queues) {
            auto it = want.find(q.get());
            EXPECT_EQ(index.find(q.get()), it == want.end() ? nullptr : it->second);
        }
        size_t seen = 0;
        index.for_each([&](Peer& p) {
            EXPECT_EQ(want.at(p.queue), &p);
            ++seen;
        });
        EXPECT_EQ(seen, want.size());
    };
    // Up and down across the point where the hash table comes in, twice.
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 40; ++i) {
            auto p = std::make_unique<Peer>();
            p->queue = queues[(i * 7 + round) % 40].get();
            Peer* raw = p.get();
            EXPECT_EQ(&index.add(std::move(p)), raw);
            want[raw->queue] = raw;
            check();
        }
        for (int i = 0; i < 40; ++i) {
            const Queue* q = queues[(i * 13 + 5) % 40].get();
            index.erase(q);
            want.erase(q);
            check();
        }
        index.erase(queues[0].get()); // absent: nothing happens
        check();
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
    PeerIndex index;
    std::map<const Queue*, Peer*> want;
    std::mt19937 rng(17);
    for (int step = 0; step < 40000; ++step) {
        const Queue* q = queues[rng() % n].get();
        bool add = want.size() < n / 2 ? rng() % 3 != 0 : rng() % 3 == 0;
        if (add && !want.contains(q)) {
            auto p = std::make_unique<Peer>();
            p->queue = const_cast<Queue*>(q);
            want[q] = &index.add(std::move(p));
        } else if (!add) {
            index.erase(q);
            want.erase(q);
        }
        if (step % 997 == 0 || step > 39000) {
            ASSERT_EQ(index.size(), want.size());
            for (const auto& qq : queues) {
                auto it = want.find(qq.get());
                ASSERT_EQ(index.find(qq.get()), it == want.end() ? nullptr : it->second);
            }
        }
    }
    // Down to none, and up again.
    for (const auto& q : queues)
        index.erase(q.get());
    EXPECT_EQ(index.size(), 0u);
    for (int i = 0; i < 100; ++i) {
        auto p = std::make_unique<Peer>();
        p->queue = queues[i].get();
        index.add(std::move(p));
    }
    for (int i = 0; i < n; ++i)
        EXPECT_EQ(index.find(queues[i].get()) != nullptr, i < 100);
}

} // namespace
} // namespace cqmgr::core
