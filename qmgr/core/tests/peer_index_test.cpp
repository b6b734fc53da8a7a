// A job's peer index finds each peer by its queue, with few peers (the
// vector alone) and many (with the hash table), while peers come and go.
#include "cqmgr/core/peer_index.hpp"
#include "cqmgr/core/structures.hpp"

#include <gtest/gtest.h>
#include <map>
#include <memory>
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

} // namespace
} // namespace cqmgr::core
