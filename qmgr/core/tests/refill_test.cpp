// Asynchronous refills, scripted: the driver answers a refill request only
// when the test says so, as the daemon does once trivial-rewrite has
// resolved the batch.  Meanwhile a peer's last, unfilled entry is held back
// so that the batch can still top it up; every connection the scheduler
// asks for must still get a request.
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

struct Refill : Fixture {
    // Two recipients per entry; a refill is asked for as soon as five slots
    // are free, and the transport pool is empty, so every message has its
    // minimum of ten slots.
    void SetUp() override {
        tc.dest_recipient_limit = 2;
        tc.refill_limit = 5;
        tc.recipient_limit = 0;
        drv.async_refills = true;
        make();
    }
    // A message with `now` recipients for `queue` read, and `later` more
    // for `later_queue` (on `later_transport`) still in the file.
    Message& partial(const std::string& id, int now, const std::string& queue, int later,
                     const std::string& later_queue, const std::string& later_transport = "smtp") {
        auto m = std::make_unique<Message>();
        m->id = id;
        s->message_add(*m);
        Transport& t = s->transport("smtp");
        for (int i = 0; i < now; ++i)
            s->assign(*m, s->queue_for(t, queue, queue),
                      rcpt(id + "-" + std::to_string(i) + "@" + queue));
        Transport& lt = s->transport(later_transport);
        Queue& lq = s->queue_for(lt, later_queue, later_queue);
        for (int i = 0; i < later; ++i)
            drv.unread[m.get()].push_back(
                {&lq, rcpt(id + "-later-" + std::to_string(i) + "@" + later_queue)});
        s->batch_done(*m, later > 0, later);
        msgs.push_back(std::move(m));
        return *msgs.back();
    }
    // Asks for a connection the way the daemon does; the entry it carries,
    // or nullptr when the scheduler asked for none.  A connection that the
    // scheduler asked for and then gave nothing fails the test.
    Entry* connect_and_select(Transport& t) {
        Transport* granted = s->select_transport();
        if (!granted) return nullptr;
        EXPECT_EQ(granted, &t);
        s->connection_ready(*granted);
        Entry* e = s->select_entry(*granted);
        EXPECT_NE(e, nullptr) << "a connection to " << granted->name << " carried no request";
        return e;
    }
    Job& job_of(Message& m, Transport& t) { return *find_job(m, t); }
};

} // namespace

// The selection that asks for a refill keeps the peer's last, unfilled
// entry back.  That entry is no room for a connection, and its job is no
// blocker (its queue has room, only the refill is missing): it stays the
// job where selection resumes.
TEST_F(Refill, HeldEntryAsksForNoConnectionAndItsJobIsNoBlocker) {
    Message& m = partial("M", 3, "d1.example", 1, "d1.example");
    Transport& t = s->transport("smtp");
    Entry* e1 = connect_and_select(t);
    ASSERT_TRUE(e1);
    EXPECT_EQ(e1->rcpts.size(), 2u);
    ASSERT_EQ(drv.refill_requests.size(), 1u); // M has 7 free slots
    // The second entry (one recipient) waits for the refill to top it up.
    EXPECT_EQ(s->select_transport(), nullptr);
    // B's entry goes past it.
    Message& b = partial("B", 2, "d2.example", 0, "d2.example");
    Entry* eb = connect_and_select(t);
    ASSERT_TRUE(eb);
    EXPECT_EQ(eb->message, &b);
    Queue& q = *e1->queue;
    EXPECT_FALSE(t.is_blocker(job_of(m, t)));
    EXPECT_NE(q.blocker_tag, t.blocker_tag);
    EXPECT_EQ(t.job_current, &job_of(m, t));
    EXPECT_EQ(s->select_transport(), nullptr);
    s->check_invariants();
    // The refill lands: the entry is full now and goes out.
    ASSERT_TRUE(drv.finish_refill(m));
    Entry* e2 = connect_and_select(t);
    ASSERT_TRUE(e2);
    EXPECT_EQ(e2->rcpts.size(), 2u);
    for (Entry* e : {e1, eb, e2})
        s->delivery_done(e, DeliveryResult{});
    EXPECT_EQ(drv.done, (std::vector<std::string>{"B", "M"}));
    EXPECT_EQ(t.early_entries, 0);
    s->check_invariants();
}

// While M's entry is held, another message's batch arrives with nothing
// for this transport.  That must not make the transport look ready: the
// only waiting entry is still M's, and it is still held.
TEST_F(Refill, AnotherMessagesBatchOpensNoIdleConnection) {
    // X: one full entry now, one recipient for another transport later.
    Message& x = partial("X", 2, "d2.example", 1, "lx.example", "local");
    Message& m = partial("M", 3, "d1.example", 1, "d1.example");
    Transport& t = s->transport("smtp");
    Entry* ex = connect_and_select(t); // X's entry; X asks for its refill
    ASSERT_TRUE(ex);
    EXPECT_EQ(ex->message, &x);
    Entry* e1 = connect_and_select(t); // M's first entry; M asks too
    ASSERT_TRUE(e1);
    EXPECT_EQ(e1->message, &m);
    ASSERT_EQ(drv.refill_requests.size(), 2u);
    // X's batch brings nothing for smtp: its one recipient is for local.
    ASSERT_TRUE(drv.finish_refill(x));
    Transport& local = s->transport("local");
    Entry* el = connect_and_select(local);
    ASSERT_TRUE(el);
    EXPECT_EQ(el->queue->transport, &local);
    EXPECT_EQ(connect_and_select(t), nullptr);
    // M's batch tops its entry up.
    ASSERT_TRUE(drv.finish_refill(m));
    Entry* e2 = connect_and_select(t);
    ASSERT_TRUE(e2);
    EXPECT_EQ(e2->message, &m);
    EXPECT_EQ(e2->rcpts.size(), 2u);
    for (Entry* e : {ex, e1, e2, el})
        s->delivery_done(e, DeliveryResult{});
    s->check_invariants();
}

// An agent that finds nothing but a held entry (it was asked for before
// the refill was, e.g. ahead of a transport rate delay) is given that
// entry as it is, rather than no request at all; the refill's recipients
// then go in an entry of their own.
TEST_F(Refill, AgentThatFindsOnlyAHeldEntryTakesIt) {
    Message& m = partial("M", 3, "d1.example", 1, "d1.example");
    Transport& t = s->transport("smtp");
    Entry* e1 = connect_and_select(t);
    ASSERT_TRUE(e1);
    Entry* e2 = s->select_entry(t);
    ASSERT_TRUE(e2);
    EXPECT_EQ(e2->rcpts.size(), 1u);
    EXPECT_EQ(t.early_entries, 1);
    ASSERT_TRUE(drv.finish_refill(m));
    Entry* e3 = connect_and_select(t);
    ASSERT_TRUE(e3);
    EXPECT_EQ(e3->rcpts.size(), 1u);
    for (Entry* e : {e1, e2, e3})
        s->delivery_done(e, DeliveryResult{});
    EXPECT_EQ(drv.done, std::vector<std::string>{"M"});
    s->check_invariants();
}
