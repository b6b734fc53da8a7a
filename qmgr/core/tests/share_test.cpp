// Destination shares on a fake clock: a queue never has more than its
// share of the transport's process limit in flight (at least 1) while
// another destination takes the rest; a lowered share bounds selection at
// once, is kept by name for a queue created later, and giving it back
// lifts it.  (lanes_property_test.cpp runs random workloads with shares.)
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

const AdminTarget smtp_slow{"smtp", "slow.example"};

} // namespace

TEST_F(Fixture, ShareKeepsEachDestinationsPlaceWhileAnotherHoldsItsAgents) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 10;
    tc.process_limit = 10;
    tc.dest_share = 30; // 3 of 10 agents
    make();
    message("A", 20, "slow.example");
    message("B", 20, "fast.example");
    Transport& t = s->transport("smtp");
    Queue& slow = *t.queue_by_name.at("slow.example");
    Queue& fast = *t.queue_by_name.at("fast.example");
    EXPECT_EQ(share_full(t), 3);
    EXPECT_EQ(slow.limits.share, 3);
    EXPECT_EQ(slow.select_window(), 3);
    EXPECT_EQ(slow.open_window(), 10);
    auto busy = fill_agents("smtp", 10);
    EXPECT_EQ(busy.size(), 10u);
    EXPECT_GE(slow.busy_count(), 3);
    EXPECT_GE(fast.busy_count(), 3);
    // The fast destination's deliveries end; the slow one's never do.  The
    // slow one takes the agents nobody else waits for, but never the three
    // that are the fast one's share.
    for (int round = 0; round < 5; ++round) {
        for (auto it = busy.begin(); it != busy.end();)
            if ((*it)->queue == &fast) {
                s->delivery_done(*it, DeliveryResult{});
                it = busy.erase(it);
            } else {
                ++it;
            }
        for (Entry* e : fill_agents("smtp", 10))
            busy.push_back(e);
        EXPECT_EQ(fast.busy_count(), 3) << "round " << round;
        EXPECT_EQ(slow.busy_count(), 7) << "round " << round;
        s->check_invariants();
    }
}

TEST_F(Fixture, ShareBindsOnlyWhileAnotherDestinationWaits) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 8;
    tc.process_limit = 10;
    tc.dest_share = 20; // 2 of 10 agents
    make();
    // Alone, a destination uses its whole window: the share costs nothing.
    message("A", 20, "slow.example");
    Transport& t = s->transport("smtp");
    Queue& slow = *t.queue_by_name.at("slow.example");
    auto busy = fill_agents("smtp", 10);
    EXPECT_EQ(slow.busy_count(), 8);
    EXPECT_FALSE(destination_waits(t));
    // Mail for another destination: it takes the free agents, and each
    // agent the slow one gives back, up to its own share.
    message("B", 5, "fast.example");
    Queue& fast = *t.queue_by_name.at("fast.example");
    EXPECT_TRUE(destination_waits(t));
    for (Entry* e : fill_agents("smtp", 10))
        busy.push_back(e);
    EXPECT_EQ(fast.busy_count(), 2);
    EXPECT_EQ(slow.busy_count(), 8);
    // Its deliveries end while the slow one holds the rest: it waits again.
    s->delivery_done(busy.back(), DeliveryResult{});
    busy.pop_back();
    s->delivery_done(busy.back(), DeliveryResult{});
    busy.pop_back();
    EXPECT_EQ(fast.busy_count(), 0);
    EXPECT_TRUE(destination_waits(t));
    // The slow one gives two agents back: the fast one, under its share
    // with mail waiting, gets the free agents first; then nobody waits,
    // and the rest go in the job walk's order, beyond the shares: the
    // fast one's last mail, then the slow one's.
    int released = 0;
    for (auto it = busy.begin(); it != busy.end() && released < 2;) {
        s->delivery_done(*it, DeliveryResult{});
        it = busy.erase(it);
        ++released;
    }
    auto got = fill_agents("smtp", 10);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0]->queue, &fast);
    EXPECT_EQ(got[1]->queue, &fast);
    EXPECT_EQ(got[2]->queue, &fast);
    EXPECT_EQ(got[3]->queue, &slow);
    EXPECT_EQ(slow.busy_count(), 7);
    EXPECT_FALSE(destination_waits(t));
    s->check_invariants();
}

TEST_F(Fixture, ShareIsAtLeastOneAgent) {
    tc.process_limit = 3;
    tc.dest_share = 10;
    make();
    EXPECT_EQ(share_full(s->transport("smtp")), 1);
    tc.dest_share = 0;
    make();
    EXPECT_EQ(share_full(s->transport("smtp")), 0);
}

TEST_F(Fixture, LoweredShareBoundsSelectionAndIsKeptByName) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 8;
    tc.process_limit = 100;
    tc.dest_share = 50;
    make();
    int wakeups = drv.wakeups;
    // Lowered before the queue exists: a queue created later takes it.
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(2)));
    EXPECT_FALSE(s->set_limit(smtp_slow, LimitChange::share(2)));
    EXPECT_GT(drv.wakeups, wakeups);
    message("A", 20, "slow.example");
    // Another destination with more mail than the agents left: it waits
    // all along, so the share binds.
    message("B", 20, "other.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("slow.example");
    Queue& other = *t.queue_by_name.at("other.example");
    EXPECT_EQ(q.limits.share, 2);
    auto busy = fill_agents("smtp", 6);
    EXPECT_EQ(q.busy_count(), 2);
    EXPECT_EQ(other.busy_count(), 4);
    // Lowered below what is in flight: nothing more starts until it is under.
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(1)));
    for (auto it = busy.begin(); it != busy.end(); ++it)
        if ((*it)->queue == &q) {
            s->delivery_done(*it, DeliveryResult{});
            busy.erase(it);
            break;
        }
    for (Entry* e : fill_agents("smtp", 6))
        busy.push_back(e);
    EXPECT_EQ(q.busy_count(), 1);
    EXPECT_EQ(other.busy_count(), 5);
    s->check_invariants();
    // Given back: the window decides again.
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(0)));
    EXPECT_FALSE(s->set_limit(smtp_slow, LimitChange::share(0)));
    EXPECT_EQ(q.limits.share, 50);
    for (Entry* e : fill())
        busy.push_back(e);
    EXPECT_GE(q.window, 8); // the success moved it
    EXPECT_EQ(q.busy_count(), q.window);
    s->check_invariants();
}

TEST_F(Fixture, LoweredShareAppliesWithoutATransportShare) {
    tc.dest_recipient_limit = 1;
    make();
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(1)));
    message("A", 5, "slow.example");
    message("B", 5, "other.example");
    auto busy = fill_agents("smtp", 3);
    Transport& t = s->transport("smtp");
    EXPECT_EQ(t.queue_by_name.at("slow.example")->busy_count(), 1);
    EXPECT_EQ(t.queue_by_name.at("other.example")->busy_count(), 2);
    s->check_invariants();
}

TEST_F(Fixture, ALoweredShareAloneTakesItsWindow) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    make();
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(1)));
    message("A", 8, "slow.example");
    EXPECT_EQ(fill().size(), 5u);
    s->check_invariants();
}

TEST_F(Fixture, AProbeShareBindsEvenAlone) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    make();
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(1, true)));
    message("A", 8, "slow.example");
    EXPECT_EQ(fill().size(), 1u);
    // The probe succeeded: the same share, now one that gives way.
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(1, false)));
    EXPECT_EQ(fill().size(), 4u);
    s->check_invariants();
}
