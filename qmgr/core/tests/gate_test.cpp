// The driver's gate on a queue (cluster leases, rate tokens): selection
// starts no more deliveries there than the gate allows, a queue created
// later starts with the driver's gate, and widening it lets mail go again.
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

TEST_F(Fixture, GateLimitsDeliveriesInFlight) {
    tc.dest_recipient_limit = 1;
    make();
    drv.gates["d.example"] = 0;
    message("A", 4, "d.example");
    message("B", 1, "other.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    ASSERT_EQ(q.limits.gate, 0);
    EXPECT_TRUE(q.may_start()); // live; the gate only limits selection
    // Only B's destination has room.
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    Entry* b = s->select_entry(t);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->message->id, "B");
    EXPECT_EQ(s->select_transport(), nullptr);
    s->delivery_done(b, DeliveryResult{});
    // Two leases arrive: two of A's entries may be in flight, not more.
    int wakeups = drv.wakeups;
    s->set_limit(q, LimitChange::gate(2));
    EXPECT_GT(drv.wakeups, wakeups);
    std::vector<Entry*> busy;
    while (Transport* ready = s->select_transport()) {
        s->connection_ready(*ready);
        if (Entry* e = s->select_entry(*ready)) busy.push_back(e);
    }
    EXPECT_EQ(busy.size(), 2u);
    EXPECT_EQ(q.busy_count(), 2);
    s->check_invariants();
    // The gate drops below what is in flight (leases lost): no room, and
    // nothing is taken back.
    s->set_limit(q, LimitChange::gate(1));
    EXPECT_EQ(s->select_transport(), nullptr);
    s->delivery_done(busy[0], DeliveryResult{});
    EXPECT_EQ(s->select_transport(), nullptr); // still 1 in flight, gate 1
    s->delivery_done(busy[1], DeliveryResult{});
    ASSERT_EQ(s->select_transport(), &t);
    // No gate: the window alone decides again.
    s->set_limit(q, LimitChange::gate(std::nullopt));
    s->check_invariants();
}

TEST_F(Fixture, GateAndWindowTheSmallerWins) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 2;
    make();
    drv.gates["d.example"] = 10;
    message("A", 5, "d.example");
    Queue& q = *s->find_queue("smtp", "d.example");
    EXPECT_EQ(q.select_window(), 2);
    s->set_limit(q, LimitChange::gate(1));
    EXPECT_EQ(q.select_window(), 1);
    EXPECT_EQ(s->find_queue("smtp", "nowhere.example"), nullptr);
    EXPECT_EQ(s->find_queue("nosuch", "d.example"), nullptr);
}

TEST_F(Fixture, QueueMarkedDeadDefersItsMailAndRevivesOnTime) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 2, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *s->find_queue("smtp", "d.example");
    s->queue_mark_dead(q, Dsn{"4.4.1", "connect to d.example: Connection refused"}, 1000 + 120);
    EXPECT_TRUE(q.dead());
    EXPECT_EQ(q.todo_count(), 0); // moved to the retry transport
    ASSERT_TRUE(s->find_queue("retry", "4.4.1 connect to d.example: Connection refused"));
    s->check_invariants();
    // New mail for it goes to retry too, until the mark's time.
    message("B", 1, "d.example");
    EXPECT_EQ(q.todo_count(), 0);
    s->set_time(1000 + 119);
    EXPECT_TRUE(q.dead());
    s->set_time(1000 + 120);
    EXPECT_FALSE(s->find_queue("smtp", "d.example") && s->find_queue("smtp", "d.example")->dead());
    s->check_invariants();
    (void)t;
}
