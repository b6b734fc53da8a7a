// Destination shares on a fake clock: a queue never has more than its
// share of the transport's process limit in flight (at least 1) while
// another destination waits, and goes beyond it while none does; a
// lowered share bounds selection at once, also while a destination with a
// whole share wants agents, is kept by name for a queue created later,
// and giving it back lifts it; a new queue starts with one agent of its
// share and doubles it with each delivery that goes through (slow start).
// (lanes_property_test.cpp runs random workloads with shares.)
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
    // Both past their slow start (SlowStart tests below).
    EXPECT_EQ(slow.share_earned, 1);
    slow.share_earned = fast.share_earned = 3;
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
        deliver_queue(busy, fast);
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
    q.share_earned = other.share_earned = 50; // past their slow start
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

TEST_F(Fixture, SlowStartKeepsNewTarpitsToOneAgentEach) {
    // 20 agents, 20 %: 4 each once earned.  A healthy destination and four
    // tarpits, all new, their mail interleaved as it is read.
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    tc.dest_concurrency_limit = 20;
    tc.process_limit = 20;
    tc.dest_share = 20;
    make();
    const std::vector<std::string> dests{"healthy.example", "t0.example", "t1.example",
                                         "t2.example", "t3.example"};
    for (int i = 0; i < 60; ++i)
        for (const auto& d : dests)
            message(d + std::to_string(i), 1, d);
    Transport& t = s->transport("smtp");
    Queue& healthy = *t.queue_by_name.at("healthy.example");
    auto busy = fill_agents("smtp", 20);
    // All new: each holds the others to its slow start.
    EXPECT_EQ(busy.size(), 5u);
    for (const auto& d : dests)
        EXPECT_EQ(t.queue_by_name.at(d)->busy_count(), 1) << d;
    // The healthy destination's deliveries go through: 2, then its whole
    // share, and then the agents the tarpits cannot take while it wants
    // them.
    for (int round = 0; round < 4; ++round) {
        deliver_queue(busy, healthy);
        for (Entry* e : fill_agents("smtp", 20))
            busy.push_back(e);
        s->check_invariants();
    }
    EXPECT_EQ(healthy.share_earned, 4);
    EXPECT_GT(healthy.busy_count(), 4);
    EXPECT_EQ(healthy.busy_count(), std::min(healthy.open_window(), 16));
    for (int d = 1; d < 5; ++d)
        EXPECT_EQ(t.queue_by_name.at(dests[d])->busy_count(), 1) << dests[d];
}

TEST_F(Fixture, SlowStartHoldsNobodyAlone) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    tc.process_limit = 20;
    tc.dest_share = 20;
    make();
    message("A", 8, "new.example");
    Queue& q = *s->find_queue("smtp", "new.example");
    EXPECT_EQ(q.select_window(), 1);
    EXPECT_EQ(q.open_window(), 5);
    EXPECT_EQ(fill().size(), 5u);
    s->check_invariants();
}

TEST_F(Fixture, SlowStartDoublesWithEachDeliveryThatGoesThrough) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    tc.process_limit = 20;
    tc.dest_share = 30; // 6 agents
    make();
    message("A", 8, "new.example");
    Queue& q = *s->find_queue("smtp", "new.example");
    auto busy = fill();
    ASSERT_EQ(busy.size(), 5u);
    EXPECT_EQ(q.share_earned, 1);
    // A deferral that names the destination (a hop status) earns nothing.
    s->delivery_done(
        busy[0],
        DeliveryResult{DeliveryResult::Kind::replied, -1, {"4.4.1", "connection refused"}});
    EXPECT_EQ(q.share_earned, 1);
    deliver(busy[1]);
    EXPECT_EQ(q.share_earned, 2);
    deliver(busy[2]);
    EXPECT_EQ(q.share_earned, 4);
    deliver(busy[3]);
    EXPECT_EQ(q.share_earned, 6); // the full share, no more
    EXPECT_EQ(share_kind(q), share_whole);
    s->check_invariants();
}

TEST_F(Fixture, ALoweredShareGivesWayOnlyWhenNoWholeShareWantsAgents) {
    // 10 agents, 20 %: 2 each.  The slow destination's share is lowered
    // to 1; the healthy one has earned its whole share and wants more
    // agents beyond it: none goes to the slow one past its 1.
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 10;
    tc.process_limit = 10;
    tc.dest_share = 20;
    make();
    ASSERT_TRUE(s->set_limit(smtp_slow, LimitChange::share(1)));
    message("A", 20, "slow.example");
    message("B", 12, "healthy.example");
    Transport& t = s->transport("smtp");
    Queue& slow = *t.queue_by_name.at("slow.example");
    Queue& healthy = *t.queue_by_name.at("healthy.example");
    slow.share_earned = healthy.share_earned = 2; // past the slow start
    EXPECT_EQ(share_kind(slow), share_lowered);
    EXPECT_EQ(share_kind(healthy), share_whole);
    auto busy = fill_agents("smtp", 10);
    EXPECT_EQ(slow.busy_count(), 1);
    EXPECT_EQ(healthy.busy_count(), 9);
    EXPECT_FALSE(destination_waits(t)); // nobody within its share waits
    // The healthy deliveries end: their agents go to its last 3, and once
    // it has no more mail, the slow one takes the idle ones.
    deliver_queue(busy, healthy);
    for (Entry* e : fill_agents("smtp", 10))
        busy.push_back(e);
    EXPECT_EQ(healthy.busy_count(), 3);
    EXPECT_EQ(slow.busy_count(), 7);
    s->check_invariants();
}
