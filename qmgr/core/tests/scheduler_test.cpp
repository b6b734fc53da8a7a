// Scheduler behaviour with a fake clock and a scripted driver.
#include "core_access.hpp"
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

TEST_F(Fixture, DeliversAndFinishesMessage) {
    tc.dest_recipient_limit = 2;
    make();
    message("A", 5);
    s->check_invariants();
    EXPECT_EQ(s->recipient_count(), 5);
    Transport* t = s->select_transport();
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->name, "smtp");
    s->connection_ready(*t);
    int entries = 0;
    while (Entry* e = s->select_entry(*t)) {
        EXPECT_LE(e->rcpts.size(), 2u);
        s->delivery_done(e, DeliveryResult{});
        s->check_invariants();
        ++entries;
    }
    EXPECT_EQ(entries, 3); // 2 + 2 + 1
    ASSERT_EQ(drv.done, std::vector<std::string>{"A"});
    EXPECT_EQ(s->recipient_count(), 0);
    EXPECT_EQ(s->queue_count(), 0);
}

TEST_F(Fixture, PendingConnectionsAreLimitedToTwo) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 10);
    EXPECT_NE(s->select_transport(), nullptr);
    EXPECT_NE(s->select_transport(), nullptr);
    EXPECT_EQ(s->select_transport(), nullptr);
}

TEST_F(Fixture, WindowLimitsConcurrencyAndBlocksJob) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 2;
    tc.dest_concurrency_limit = 2;
    make();
    message("A", 4, "slow.example");
    message("B", 1, "fast.example");
    Transport& t = s->transport("smtp");
    Entry* a1 = s->select_entry(t);
    Entry* a2 = s->select_entry(t);
    ASSERT_TRUE(a1 && a2);
    EXPECT_EQ(a1->message->id, "A");
    // slow.example is full: A is a blocker, B goes ahead.
    Entry* b = s->select_entry(t);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->message->id, "B");
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->delivery_done(a1, DeliveryResult{});
    Entry* a3 = s->select_entry(t); // unblocked
    ASSERT_TRUE(a3);
    EXPECT_EQ(a3->message->id, "A");
    s->delivery_done(a2, DeliveryResult{});
    s->delivery_done(a3, DeliveryResult{});
    s->delivery_done(b, DeliveryResult{});
    while (Entry* e = s->select_entry(t))
        s->delivery_done(e, DeliveryResult{});
    s->check_invariants();
    EXPECT_EQ(drv.done.size(), 2u);
}

TEST_F(Fixture, DeadDestinationGoesToRetry) {
    Message& m = kill_destination("down.example", 3);
    Transport& t = s->transport("smtp");
    EXPECT_NE(m.flags, 0);
    s->check_invariants();
    const auto& retry = s->transports().at("retry");
    ASSERT_EQ(retry->queue_by_name.size(), 1u);
    const Queue& rq = *retry->queue_by_name.begin()->second;
    EXPECT_EQ(rq.name, "4.4.1 delivery temporarily suspended: connect refused");
    EXPECT_EQ(rq.todo_count(), 2);
    // New mail for the dead destination goes straight to retry.
    Queue& q = s->queue_for(t, "down.example", "down.example");
    EXPECT_EQ(q.transport->name, "retry");
    // minimal_backoff_time later the destination is alive again.
    EXPECT_EQ(s->next_timer(), 1000 + cfg.minimal_backoff_time);
    s->set_time(1000 + cfg.minimal_backoff_time);
    Queue& q2 = s->queue_for(t, "down.example", "down.example");
    EXPECT_EQ(q2.transport->name, "smtp");
}

TEST_F(Fixture, NegativeFeedbackShrinksWindow) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    tc.fail_cohort_limit = 0; // never dead
    make();
    message("A", 10, "x.example");
    Transport& t = s->transport("smtp");
    std::vector<Entry*> es;
    for (int i = 0; i < 5; ++i)
        es.push_back(s->select_entry(t));
    Queue& q = *es[0]->queue;
    EXPECT_EQ(q.window, 5);
    // The negative hysteresis cycle starts with its step: 5 -> 3 on the first
    // failure, then one step per failure.
    s->delivery_done(es[0],
                     DeliveryResult{DeliveryResult::Kind::replied, -1, {"4.7.0", "421 too many"}});
    EXPECT_EQ(q.window, 3);
    s->delivery_done(es[1],
                     DeliveryResult{DeliveryResult::Kind::replied, -1, {"4.7.0", "421 too many"}});
    EXPECT_EQ(q.window, 2);
    // Success grows it again (up to busy + initial).
    s->delivery_done(es[2], DeliveryResult{});
    EXPECT_EQ(q.window, 3);
    s->delivery_done(es[3], DeliveryResult{});
    s->delivery_done(es[4], DeliveryResult{});
    s->check_invariants();
}

TEST_F(Fixture, CrashDefersMessageAndKeepsTransportUsable) {
    tc.dest_recipient_limit = 1;
    tc.fail_cohort_limit = 0;
    make();
    Message& m = message("A", 2);
    Transport& t = s->transport("smtp");
    Entry* e = s->select_entry(t);
    s->delivery_done(e, DeliveryResult{DeliveryResult::Kind::crashed, 0, {}});
    EXPECT_NE(m.flags, 0);
    EXPECT_FALSE(t.dead);
    Entry* e2 = s->select_entry(t);
    ASSERT_TRUE(e2);
    s->delivery_done(e2, DeliveryResult{});
    EXPECT_EQ(drv.done.size(), 1u);
}

// A request that never reached an agent: the entry waits again (no
// attempt was made) and the transport is dead with stock's reason.
TEST_F(Fixture, UnavailableAgentKillsTheTransportAndKeepsTheEntry) {
    tc.dest_recipient_limit = 1;
    make();
    Message& m = message("A", 1);
    Transport& t = s->transport("smtp");
    Entry* e = s->select_entry(t);
    ASSERT_TRUE(e);
    s->delivery_done(e, DeliveryResult{DeliveryResult::Kind::unavailable, -1, {}});
    EXPECT_TRUE(t.dead);
    ASSERT_TRUE(t.dsn);
    EXPECT_EQ(*t.dsn, transport_unavailable());
    // Its recipient went on to the retry transport, not lost.
    EXPECT_EQ(m.refcount, 1);
    EXPECT_EQ(s->transport("retry").queue_by_name.count("4.3.0 mail transport unavailable"), 1u);
    s->check_invariants();
}

TEST_F(Fixture, DeadTransportDefersEverything) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 3, "a.example");
    message("B", 2, "b.example");
    Transport* t = s->select_transport();
    ASSERT_TRUE(t);
    s->connection_failed(*t, {"4.3.0", "mail transport unavailable"});
    EXPECT_TRUE(t->dead);
    const auto& retry = s->transports().at("retry");
    ASSERT_EQ(retry->queue_by_name.size(), 1u);
    EXPECT_EQ(retry->queue_by_name.begin()->second->todo_count(), 5);
    s->check_invariants();
    s->set_time(1000 + cfg.transport_retry_time);
    EXPECT_FALSE(t->dead);
}

TEST_F(Fixture, RouteDefersInPlaceWhenRetryIsDeadToo) {
    tc.dest_recipient_limit = 1;
    make();
    Transport& smtp = s->transport("smtp");
    Transport& retry = s->transport("retry");
    Dsn why;
    // Alive: the recipient's own queue.
    Queue* q = s->route(smtp, "a.example", "a.example", why);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->transport, &smtp);
    SchedulerAccess::core(*s).transports.dead(smtp, {"4.3.0", "mail transport unavailable"});
    // A dead transport sends it to retry while retry is alive...
    q = s->route(smtp, "a.example", "a.example", why);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->transport, &retry);
    // ... and nowhere once retry is dead as well: the caller defers it.
    SchedulerAccess::core(*s).transports.dead(retry, {"4.3.0", "retry unavailable"});
    EXPECT_EQ(s->route(smtp, "a.example", "a.example", why), nullptr);
    EXPECT_EQ(why, (Dsn{"4.3.0", "mail transport unavailable"}));
    EXPECT_EQ(s->route(retry, "x", "x", why), nullptr);
    EXPECT_EQ(why, (Dsn{"4.3.0", "retry unavailable"}));
    s->check_invariants();
}

// postqueue -i/-s: a message flushed on its own revives its dead transport
// and its dead destination while it is resolved.
TEST_F(Fixture, RouteForAFlushedMessageRevivesTransportAndQueue) {
    kill_destination("down.example", 2);
    Transport& smtp = s->transport("smtp");
    Dsn why;
    // Without the flush the destination stays dead: the recipient goes to retry.
    Queue* q = s->route(smtp, "down.example", "down.example", why);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->transport->name, "retry");
    q = s->route(smtp, "down.example", "down.example", why, true);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->transport, &smtp);
    EXPECT_FALSE(q->dead());
    EXPECT_EQ(q->window, 1);
    SchedulerAccess::core(*s).transports.dead(smtp, {"4.3.0", "mail transport unavailable"});
    q = s->route(smtp, "down.example", "down.example", why, true);
    ASSERT_TRUE(q);
    EXPECT_FALSE(smtp.dead);
    EXPECT_EQ(q->transport, &smtp);
    // The old revive timer is now stale and changes nothing.
    s->set_time(1000 + cfg.transport_retry_time);
    EXPECT_FALSE(smtp.dead);
    s->check_invariants();
}

TEST_F(Fixture, RefillsFromRecipientPool) {
    tc.dest_recipient_limit = 10;
    tc.recipient_limit = 100; // transport pool
    cfg.message_recipient_limit = 50;
    cfg.message_recipient_minimum = 10;
    make();
    // A big message that does not fit: read the first batch only.
    auto m = std::make_unique<Message>();
    m->id = "BIG";
    s->message_add(*m);
    Transport& t = s->transport("smtp");
    int first = s->first_batch_limit(*m);
    EXPECT_EQ(first, 50);
    Queue& q = s->queue_for(t, "list.example", "list.example");
    for (int i = 0; i < 1000; ++i) {
        if (i < first)
            s->assign(*m, q, rcpt("u" + std::to_string(i)));
        else
            drv.unread[m.get()].push_back({&q, rcpt("u" + std::to_string(i))});
    }
    s->batch_done(*m, true, 1000 - first);
    int delivered = 0, max_in_core = 0;
    while (Entry* e = s->select_entry(t)) {
        max_in_core = std::max(max_in_core, s->recipient_count());
        delivered += static_cast<int>(e->rcpts.size());
        s->delivery_done(e, DeliveryResult{});
        s->check_invariants();
    }
    EXPECT_EQ(delivered, 1000);
    // Never more in core than the transport pool plus the first batch.
    EXPECT_LE(max_in_core, 100 + 50);
    EXPECT_EQ(drv.done, std::vector<std::string>{"BIG"});
    msgs.push_back(std::move(m));
}

// A later batch is sized by the message's unused recipient slots alone,
// as stock sizes every reread; the first batch by how full the active
// queue is.  A message whose first batch went nowhere (deferred by qmgr
// itself) holds only the per-message minimum.
TEST_F(Fixture, RereadsUseTheMessagesUnusedSlots) {
    cfg.message_recipient_limit = 50;
    cfg.message_recipient_minimum = 10;
    make();
    auto m = std::make_unique<Message>();
    m->id = "M";
    s->message_add(*m);
    EXPECT_EQ(s->first_batch_limit(*m), 50);
    EXPECT_EQ(s->reread_limit(*m), 10);
    m->rcpt_limit = 12;
    m->rcpt_count = 4;
    EXPECT_EQ(s->reread_limit(*m), 8);
    m->rcpt_limit = 9000;
    m->rcpt_count = 0;
    EXPECT_EQ(s->reread_limit(*m), 5000); // at most 5000, as the first batch
    msgs.push_back(std::move(m));
}

TEST_F(Fixture, TransportRateDelayLocksTheTransport) {
    tc.dest_recipient_limit = 1;
    tc.transport_rate_delay = 2;
    make();
    message("A", 3, "a.example");
    message("B", 3, "b.example");
    Transport* t = s->select_transport();
    ASSERT_TRUE(t);
    EXPECT_TRUE(t->rate_locked);
    EXPECT_EQ(s->select_transport(), nullptr); // one at a time
    s->connection_ready(*t);
    Entry* e = s->select_entry(*t);
    ASSERT_TRUE(e);
    s->delivery_done(e, DeliveryResult{});
    EXPECT_FALSE(t->rate_locked);
    EXPECT_EQ(s->select_transport(), t);
}

namespace {
struct WarnDriver : FakeDriver {
    std::vector<std::string> warnings;
    void warn(const std::string& w) override { warnings.push_back(w); }
    int active_messages() const override { return 10; }
};
} // namespace

TEST(Clog, WarnsOncePerIntervalWhenOneQueueHoldsAFifth) {
    WarnDriver drv;
    SchedulerConfig cfg;
    cfg.message_active_limit = 10; // a fifth is 2 entries
    cfg.clog_warn_time = 300;
    TransportConfig tc;
    tc.dest_recipient_limit = 1;
    Scheduler s(
        cfg, [&](const std::string&) { return tc; }, drv);
    drv.sched = &s;
    s.set_time(1000);
    Message m;
    m.id = "A";
    s.message_add(m);
    Transport& t = s.transport("smtp");
    for (int i = 0; i < 5; ++i)
        s.assign(m, s.queue_for(t, "big.example", "big.example"), rcpt("u" + std::to_string(i)));
    ASSERT_FALSE(drv.warnings.empty());
    EXPECT_EQ(drv.warnings[0], "mail for big.example is using up 3 of 10 active queue entries");
    EXPECT_EQ(drv.warnings.back(), "to turn off these warnings specify: qmgr_clog_warn_time = 0");
    size_t n = drv.warnings.size();
    s.assign(m, s.queue_for(t, "big.example", "big.example"), rcpt("u9"));
    EXPECT_EQ(drv.warnings.size(), n); // not again within the interval
    drv.free_on_done = false;
}

// Stock advises a separate transport only when other destinations share
// the transport (its queue list has more than this queue); with one
// destination alone it advises shorter timeouts and backoffs instead,
// however many messages the destination's entries belong to.
TEST(Clog, AdviceDependsOnOtherDestinationsOfTheTransport) {
    auto advice = [](bool second_queue) {
        WarnDriver drv;
        SchedulerConfig cfg;
        cfg.message_active_limit = 10;
        cfg.clog_warn_time = 300;
        TransportConfig tc;
        tc.dest_recipient_limit = 1;
        tc.init_dest_concurrency = 1; // a window the active queue has room for
        Scheduler s(
            cfg, [&](const std::string&) { return tc; }, drv);
        drv.sched = &s;
        s.set_time(1000);
        Message a, b;
        a.id = "A";
        b.id = "B";
        s.message_add(a);
        s.message_add(b);
        Transport& t = s.transport("smtp");
        if (second_queue) s.assign(b, s.queue_for(t, "other.example", "other.example"), rcpt("x"));
        for (int i = 0; i < 3; ++i) {
            Message& m = i % 2 ? b : a; // entries of two messages
            s.assign(m, s.queue_for(t, "big.example", "big.example"),
                     rcpt("u" + std::to_string(i)));
        }
        drv.free_on_done = false;
        return drv.warnings;
    };
    auto has = [](const std::vector<std::string>& w, const std::string& line) {
        return std::find(w.begin(), w.end(), line) != w.end();
    };
    auto alone = advice(false);
    EXPECT_TRUE(has(alone, "you may need to reduce smtp connect and helo timeouts"));
    EXPECT_FALSE(has(alone, "you may need a separate master.cf transport for big.example"));
    auto shared = advice(true);
    EXPECT_TRUE(has(shared, "you may need a separate master.cf transport for big.example"));
    EXPECT_FALSE(has(shared, "you may need to reduce smtp connect and helo timeouts"));
}

// When the retry transport's queue for a reason is dead itself, a
// destination that dies for the same reason has its waiting mail deferred
// by the driver, as stock does, instead of moving it into the dead queue.
TEST_F(Fixture, DeadRetryQueueLeavesTheDeferralToTheDriver) {
    const DeliveryResult refused{DeliveryResult::Kind::replied, 1, {"4.4.1", "connect refused"}};
    kill_destination("a.example", 2);
    Transport& retry = s->transport("retry");
    ASSERT_EQ(retry.queue_by_name.size(), 1u);
    Queue& rq = *retry.queue_by_name.begin()->second;
    Entry* r = s->select_entry(retry);
    ASSERT_TRUE(r);
    s->delivery_done(r, refused);
    ASSERT_TRUE(rq.dead());
    message("B", 2, "b.example");
    Entry* b = s->select_entry(s->transport("smtp"));
    ASSERT_TRUE(b);
    EXPECT_EQ(b->message->id, "B");
    s->delivery_done(b, refused);
    EXPECT_EQ(drv.deferred, std::vector<std::string>{"B-1@b.example"});
    EXPECT_EQ(rq.todo_count(), 0);
    s->check_invariants();
}
