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

TEST_F(Fixture, ShareCapsOneDestinationWhileAnotherTakesTheRest) {
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
    auto busy = fill();
    EXPECT_EQ(slow.busy_count(), 3);
    EXPECT_EQ(fast.busy_count(), 3);
    // The fast destination's deliveries end; the slow one's never do.
    for (int round = 0; round < 5; ++round) {
        for (auto it = busy.begin(); it != busy.end();)
            if ((*it)->queue == &fast) {
                s->delivery_done(*it, DeliveryResult{});
                it = busy.erase(it);
            } else {
                ++it;
            }
        for (Entry* e : fill())
            busy.push_back(e);
        EXPECT_EQ(slow.busy_count(), 3);
        s->check_invariants();
    }
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
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("slow.example");
    EXPECT_EQ(q.limits.share, 2);
    auto busy = fill();
    EXPECT_EQ(busy.size(), 2u);
    // Lowered below what is in flight: nothing more starts until it is under.
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(1)));
    s->delivery_done(busy.back(), DeliveryResult{});
    busy.pop_back();
    EXPECT_TRUE(fill().empty());
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
    EXPECT_EQ(fill().size(), 1u);
    s->check_invariants();
}
