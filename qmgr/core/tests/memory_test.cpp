// Destinations remembered from an earlier run (Scheduler::queue_restore_dead
// and queue_remember), on a fake clock at 1000.
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {
const Dsn refused{"4.4.1", "delivery temporarily suspended: connect to down.example: refused"};

// One-recipient entries, queues that start at window 2, and window 7
// remembered for smtp's big.example, where message "A" has `n` recipients.
struct Remembered : Fixture {
    void make_with_big(int n) {
        tc.init_dest_concurrency = 2;
        tc.dest_recipient_limit = 1;
        make();
        s->queue_remember("smtp", "big.example", QueueMemory{7, 0});
        message("A", n, "big.example");
    }
};
} // namespace

TEST_F(Fixture, RestoredDeadDestinationSendsItsMailToRetry) {
    make();
    Queue* q = s->queue_restore_dead("smtp", "down.example", "down.example", refused, 1200);
    ASSERT_TRUE(q);
    EXPECT_TRUE(q->dead());
    EXPECT_EQ(q->dsn, refused);
    EXPECT_EQ(q->timer_due, 1200);
    s->check_invariants();
    // Its mail goes to the retry queue named by the reason, as for a queue
    // that died in this run; nothing is selected for smtp.
    message("A", 2, "down.example");
    const auto& retry = s->transports().at("retry");
    ASSERT_EQ(retry->queue_by_name.size(), 1u);
    EXPECT_EQ(retry->queue_by_name.begin()->second->name, refused.status + " " + refused.reason);
    EXPECT_EQ(s->select_entry(s->transport("smtp")), nullptr);
    Transport* t = s->select_transport();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->name, "retry");
    s->check_invariants();
}

TEST_F(Fixture, RestoredDeadDestinationRevivesAtItsTime) {
    make();
    Queue* q = s->queue_restore_dead("smtp", "down.example", "down.example", refused, 1200);
    ASSERT_TRUE(q);
    EXPECT_EQ(s->next_timer(), 1200);
    s->set_time(1199);
    Transport& t = s->transport("smtp");
    EXPECT_EQ(s->queue_for(t, "down.example", "down.example").transport->name, "retry");
    s->set_time(1200);
    // Revived and, with nothing to do, let go.
    EXPECT_EQ(t.queue_by_name.count("down.example"), 0u);
    Queue& live = s->queue_for(t, "down.example", "down.example");
    EXPECT_EQ(live.transport->name, "smtp");
    EXPECT_EQ(live.window, tc.init_dest_concurrency);
    s->check_invariants();
}

TEST_F(Fixture, RestoredDeathLastsAtMostMinimalBackoffTime) {
    cfg.minimal_backoff_time = 60;
    make();
    Queue* q = s->queue_restore_dead("smtp", "down.example", "down.example", refused, 5000);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->timer_due, 1060);
    EXPECT_EQ(s->next_timer(), 1060);
}

TEST_F(Fixture, RestoredDeadDestinationIsRevivedByAFlush) {
    make();
    ASSERT_TRUE(s->queue_restore_dead("smtp", "down.example", "down.example", refused, 1200));
    s->flush_dead();
    EXPECT_EQ(s->transport("smtp").queue_by_name.count("down.example"), 0u);
    s->check_invariants();
}

TEST_F(Fixture, RestoringDeathIgnoresThePastExistingQueuesAndRetry) {
    make();
    EXPECT_EQ(s->queue_restore_dead("smtp", "old.example", "old.example", refused, 1000), nullptr);
    message("A", 1, "live.example");
    EXPECT_EQ(s->queue_restore_dead("smtp", "live.example", "live.example", refused, 1200),
              nullptr);
    EXPECT_FALSE(s->transport("smtp").queue_by_name.at("live.example")->dead());
    EXPECT_EQ(s->queue_restore_dead("retry", "x", "x", refused, 1200), nullptr);
    s->check_invariants();
}

TEST_F(Fixture, RememberedWindowIsWhereANewQueueStarts) {
    tc.init_dest_concurrency = 2;
    tc.dest_concurrency_limit = 10;
    make();
    s->queue_remember("smtp", "big.example", QueueMemory{7, 0});
    s->queue_remember("smtp", "huge.example", QueueMemory{50, 0});
    s->queue_remember("other", "big.example", QueueMemory{9, 0});
    Transport& t = s->transport("smtp");
    EXPECT_EQ(s->queue_for(t, "big.example", "big.example").window, 7);
    // Capped by the destination concurrency limit.
    EXPECT_EQ(s->queue_for(t, "huge.example", "huge.example").window, 10);
    EXPECT_EQ(s->queue_for(t, "new.example", "new.example").window, 2);
    s->check_invariants();
}

TEST_F(Remembered, WindowServesOnlyTheFirstCreation) {
    make_with_big(1);
    Transport& t = s->transport("smtp");
    Entry* e = s->select_entry(t);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->queue->window, 7);
    s->delivery_done(e, DeliveryResult{});
    // The queue is gone; the next one is created afresh.
    EXPECT_EQ(t.queue_by_name.count("big.example"), 0u);
    EXPECT_EQ(s->queue_for(t, "big.example", "big.example").window, 2);
}

TEST_F(Remembered, WindowRunsSevenDeliveriesAtOnce) {
    make_with_big(10);
    Transport& t = s->transport("smtp");
    int selected = 0;
    while (s->select_entry(t))
        ++selected;
    EXPECT_EQ(selected, 7);
}

TEST_F(Fixture, RememberedDeliveryWaitsOutTheRestOfTheRateDelay) {
    tc.dest_rate_delay = 10;
    make();
    s->queue_remember("smtp", "slow.example", QueueMemory{1, 995});
    message("A", 1, "slow.example");
    Queue& q = *s->transport("smtp").queue_by_name.at("slow.example");
    EXPECT_TRUE(q.suspended);
    EXPECT_EQ(s->select_entry(s->transport("smtp")), nullptr);
    EXPECT_EQ(s->next_timer(), 1005);
    s->set_time(1005);
    EXPECT_FALSE(q.suspended);
    EXPECT_NE(s->select_entry(s->transport("smtp")), nullptr);
}

TEST_F(Fixture, RememberedDeliveryLongAgoDoesNotPause) {
    tc.dest_rate_delay = 10;
    make();
    s->queue_remember("smtp", "slow.example", QueueMemory{1, 900});
    message("A", 1, "slow.example");
    EXPECT_NE(s->select_entry(s->transport("smtp")), nullptr);
}
