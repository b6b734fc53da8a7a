// Rate delays on a fake clock.  The destination rate delay runs one
// delivery at a time per destination and pauses the destination after each
// delivery; the transport rate delay runs one delivery at a time per
// transport, and the driver waits the delay after the agent is ready
// before it asks for the entry.
#include "core_access.hpp"
#include "cqmgr/core/simulation.hpp"
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

// Selects and finishes one entry of `t` at the current time.
Entry* deliver_one(Scheduler& s, Transport& t, const DeliveryResult& r = {}) {
    Entry* e = s.select_entry(t);
    if (e) s.delivery_done(e, r);
    return e;
}

} // namespace

// ---- destination rate delay ----

TEST_F(Fixture, DestinationRateDelayForcesConcurrencyOne) {
    tc.dest_rate_delay = 10;
    tc.dest_concurrency_limit = 20;
    tc.init_dest_concurrency = 5;
    make();
    Transport& t = s->transport("smtp");
    EXPECT_EQ(t.cfg.dest_concurrency_limit, 1);
    EXPECT_EQ(t.cfg.init_dest_concurrency, 1);
}

TEST_F(Fixture, DestinationRateDelayPausesTheDestinationAfterEachDelivery) {
    tc.dest_rate_delay = 10;
    Entry* a1 = first_entry_of_a(3, "slow.example");
    ASSERT_TRUE(a1);
    message("B", 1, "other.example");
    Transport& t = *a1->queue->transport;
    Queue& q = *a1->queue;
    EXPECT_EQ(q.window, 1);
    // One at a time: the next entry for slow.example waits, B goes ahead.
    Entry* b = s->select_entry(t);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->message->id, "B");
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->set_time(1003);
    s->delivery_done(a1, DeliveryResult{});
    // Paused for the delay, counted from the end of the delivery.
    EXPECT_TRUE(q.suspended);
    EXPECT_FALSE(q.ready());
    EXPECT_EQ(s->select_transport(), nullptr);
    EXPECT_EQ(s->select_entry(t), nullptr);
    EXPECT_EQ(s->next_timer(), 1013);
    s->set_time(1012);
    EXPECT_TRUE(q.suspended);
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->set_time(1013);
    EXPECT_FALSE(q.suspended);
    EXPECT_EQ(q.window, 1);
    // A failed delivery pauses it just the same.
    Transport* granted = s->select_transport();
    ASSERT_EQ(granted, &t);
    s->connection_ready(t);
    ASSERT_TRUE(deliver_one(*s, t, DeliveryResult{DeliveryResult::Kind::replied, 1, {}}));
    EXPECT_TRUE(q.suspended);
    EXPECT_EQ(s->next_timer(), 1023);
    s->delivery_done(b, DeliveryResult{});
    s->check_invariants();
    s->set_time(1023);
    ASSERT_TRUE(deliver_one(*s, t));
    // The destination is empty now: it is let go when its pause ends.
    EXPECT_TRUE(t.queue_by_name.count("slow.example"));
    s->set_time(1033);
    EXPECT_FALSE(t.queue_by_name.count("slow.example"));
    EXPECT_EQ(drv.done.size(), 2u);
    s->check_invariants();
}

// A delivery that kills its destination (a whole failed cohort) still
// ends in the pause: the destination is brought back at once and paused,
// not left dead for minimal_backoff_time.  Its waiting mail went to retry.
TEST_F(Fixture, DestinationRateDelayRevivesADestinationItsDeliveryKilled) {
    tc.dest_rate_delay = 10;
    tc.fail_cohort_limit = 1;
    Entry* e = first_entry_of_a(3, "down.example");
    ASSERT_TRUE(e);
    Transport& t = *e->queue->transport;
    Queue& q = *e->queue;
    s->delivery_done(
        e, DeliveryResult{DeliveryResult::Kind::replied, 1, {"4.4.1", "connect refused"}});
    EXPECT_FALSE(q.dead());
    EXPECT_TRUE(q.suspended);
    EXPECT_EQ(q.todo_count(), 0);
    EXPECT_EQ(s->transports().at("retry")->queue_by_name.size(), 1u);
    EXPECT_EQ(s->next_timer(), 1010);
    // New mail for it goes to it, not to retry, and waits for the pause.
    EXPECT_EQ(&s->queue_for(t, "down.example", "down.example"), &q);
    s->check_invariants();
}

// ---- transport rate delay ----

namespace {
struct TransportRate : Fixture {
    void SetUp() override {
        tc.dest_recipient_limit = 1;
        tc.transport_rate_delay = 5;
        make();
        message("A", 3, "a.example");
        message("B", 3, "b.example");
    }
    // Grants the one connection and readies its agent.
    Transport& connect() {
        Transport* t = s->select_transport();
        EXPECT_TRUE(t);
        EXPECT_TRUE(t->rate_locked);
        s->connection_ready(*t);
        return *t;
    }
};
} // namespace

TEST_F(TransportRate, OneDeliveryAtATimeReleasedByTheReply) {
    Transport& t = connect();
    // Plenty of room, but one delivery at a time.
    EXPECT_EQ(s->select_transport(), nullptr);
    Entry* e = s->select_entry(t);
    ASSERT_TRUE(e);
    EXPECT_EQ(s->select_transport(), nullptr);
    s->delivery_done(e, DeliveryResult{});
    EXPECT_FALSE(t.rate_locked);
    // A reply that defers (no crash) releases it too.
    connect();
    ASSERT_TRUE(deliver_one(*s, t, DeliveryResult{DeliveryResult::Kind::replied, 1, {}}));
    EXPECT_FALSE(t.rate_locked);
    EXPECT_EQ(s->select_transport(), &t);
}

TEST_F(TransportRate, LockHeldWhileTheTransportIsDeadUntilItRevives) {
    Transport* t = s->select_transport();
    ASSERT_TRUE(t);
    s->connection_failed(*t, {"4.3.0", "mail transport unavailable"});
    EXPECT_TRUE(t->dead);
    EXPECT_TRUE(t->rate_locked);
    s->set_time(1000 + cfg.transport_retry_time);
    EXPECT_FALSE(t->dead);
    EXPECT_FALSE(t->rate_locked);
}

TEST_F(TransportRate, FlushRevivesADeadTransportAndReleasesItsLock) {
    Transport* t = s->select_transport();
    ASSERT_TRUE(t);
    s->connection_failed(*t, {"4.3.0", "mail transport unavailable"});
    s->flush_dead();
    EXPECT_FALSE(t->dead);
    EXPECT_FALSE(t->rate_locked);
}

// postqueue -f revives dead transports only; a live transport with a
// delivery under way keeps its lock, or a second delivery would start.
TEST_F(TransportRate, FlushKeepsTheLockOfALiveTransport) {
    Transport& t = connect();
    Entry* e = s->select_entry(t);
    ASSERT_TRUE(e);
    s->flush_dead();
    EXPECT_TRUE(t.rate_locked);
    EXPECT_EQ(s->select_transport(), nullptr);
    s->delivery_done(e, DeliveryResult{});
    s->check_invariants();
}

// Where cqmgr differs from stock: stock keeps the lock after a crashed
// agent, and when the agent finds no entry, and then never runs the
// transport again; cqmgr releases it.
TEST_F(TransportRate, CrashAndEmptySelectionReleaseTheLock) {
    Transport& t = connect();
    ASSERT_TRUE(deliver_one(*s, t, DeliveryResult{DeliveryResult::Kind::crashed, 0, {}}));
    EXPECT_FALSE(t.rate_locked);
    connect();
    // Its mail went elsewhere meanwhile (here: to retry, with the
    // transport declared dead).
    SchedulerAccess::core(*s).transports.dead(t, {"4.3.0", "mail transport unavailable"});
    EXPECT_EQ(s->select_entry(t), nullptr);
    EXPECT_FALSE(t.rate_locked);
}

// ---- spacing, on the simulator's clock ----

namespace {
SimConfig one_at_a_time(int transport_delay, int destination_delay) {
    SimConfig c;
    c.default_transport.dest_recipient_limit = 1;
    c.default_transport.transport_rate_delay = transport_delay;
    c.default_transport.dest_rate_delay = destination_delay;
    c.destinations.push_back({.name = "a.example", .latency_per_rcpt = 2.0});
    c.destinations.push_back({.name = "b.example", .latency_per_rcpt = 2.0});
    c.messages.push_back(
        {.id = "A", .arrival = 0, .recipients = {{"a.example", 4}, {"b.example", 4}}});
    return c;
}
} // namespace

TEST(RateDelaySpacing, TransportDelaySpacesEveryDeliveryOfTheTransport) {
    SimResult r = simulate(one_at_a_time(3, 0));
    ASSERT_EQ(r.delivered, 8);
    EXPECT_EQ(r.idle_connections, 0);
    ASSERT_EQ(r.deliveries.size(), 8u);
    // Never two at once; each starts the delay after the last one ended.
    EXPECT_EQ(r.deliveries[0].start, 3.0);
    for (size_t i = 1; i < r.deliveries.size(); ++i)
        EXPECT_EQ(r.deliveries[i].start, r.deliveries[i - 1].end + 3) << "delivery " << i;
}

TEST(RateDelaySpacing, DestinationDelaySpacesEachDestinationOnItsOwn) {
    SimResult r = simulate(one_at_a_time(0, 3));
    ASSERT_EQ(r.delivered, 8);
    EXPECT_EQ(r.idle_connections, 0);
    std::map<std::string, std::vector<SimDelivery>> by_dest;
    for (const auto& d : r.deliveries)
        by_dest[d.destination].push_back(d);
    ASSERT_EQ(by_dest.size(), 2u);
    for (const auto& [dest, ds] : by_dest) {
        ASSERT_EQ(ds.size(), 4u) << dest;
        EXPECT_EQ(ds[0].start, 0.0) << dest; // the two destinations run side by side
        for (size_t i = 1; i < ds.size(); ++i)
            EXPECT_EQ(ds[i].start, ds[i - 1].end + 3) << dest << " delivery " << i;
    }
}

TEST_F(Fixture, AdminSettingDuringTheRateDelayPauseDoesNotStrandTheJob) {
    // The job waiting for the paused queue is a blocker; a throttle of that
    // queue while it pauses must leave the queue's mark, so that the end of
    // the pause frees the job (it used to stay blocked for good).
    tc.dest_rate_delay = 10;
    Entry* a1 = first_entry_of_a(3, "slow.example");
    ASSERT_TRUE(a1);
    Transport& t = *a1->queue->transport;
    Queue& q = *a1->queue;
    s->delivery_done(a1, DeliveryResult{});
    ASSERT_TRUE(q.suspended);
    EXPECT_EQ(s->select_entry(t), nullptr); // A is marked a blocker
    ASSERT_TRUE(
        s->set_limit(AdminTarget{"smtp", "slow.example"}, LimitChange::cap(AdminCap{3, 0, 0})));
    s->check_invariants();
    s->set_time(1010);
    EXPECT_FALSE(q.suspended);
    Entry* a2 = s->select_entry(t);
    ASSERT_TRUE(a2);
    s->delivery_done(a2, DeliveryResult{});
    s->check_invariants();
}
