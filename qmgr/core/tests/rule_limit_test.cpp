// A reply rule's action as a bound on queues (Limits::rule, Bound::rule):
// how it combines with the others, that it is kept by name for a queue or
// a whole transport, that it ends by itself at its time, and that it only
// decides when mail is tried: nothing is deferred or made dead by it.
#include "cqmgr/core/limit_book.hpp"
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

const AdminTarget smtp_d{"smtp", "d.example"};
const AdminTarget smtp_all{"smtp", ""};

RuleLimit hold_until(int64_t until) {
    return RuleLimit{.hold = true, .until = until};
}

// Selects and delivers entries of `t` until none is left; returns how many.
int deliver_all(Scheduler& s, Transport& t) {
    int n = 0;
    while (Entry* e = s.select_entry(t)) {
        s.delivery_done(e, DeliveryResult{});
        s.check_invariants();
        ++n;
    }
    return n;
}

} // namespace

TEST(RuleLimits, ARuleBoundsLikeTheOthers) {
    Limits l;
    l.rule = RuleLimit{.concurrency = 2};
    EXPECT_EQ(l.window(5), 2);
    EXPECT_FALSE(l.stopped());
    EXPECT_EQ(l.pause(), 0);
    l.rule = RuleLimit{.pause = 30};
    EXPECT_EQ(l.pause(), 30);
    EXPECT_EQ(l.window(5), 1); // a pause means one at a time
    l.learned.rate_delay = 40;
    EXPECT_EQ(l.pause(), 40); // the longer pause
    l.rule = hold_until(0);
    EXPECT_TRUE(l.stopped());
    EXPECT_EQ(l.window(5), 1); // still paused by the learned limit
}

TEST(RuleLimits, TheBookKeepsAQueuesOrATransports) {
    LimitBook book;
    EXPECT_TRUE(book.set(smtp_all, LimitChange::rule(RuleLimit{.concurrency = 3})));
    EXPECT_FALSE(book.empty());
    // A queue of the transport takes the transport's, unless it has its own.
    EXPECT_EQ(book.covering("smtp", "x.example", 0).rule, (RuleLimit{.concurrency = 3}));
    EXPECT_TRUE(book.set(smtp_d, LimitChange::rule(hold_until(900))));
    EXPECT_EQ(book.covering("smtp", "d.example", 0).rule, hold_until(900));
    EXPECT_FALSE(book.covering("relay", "d.example", 0).rule);
    // Ends at its time only.
    EXPECT_FALSE(book.expire(Bound::rule, smtp_d, 800));
    EXPECT_TRUE(book.expire(Bound::rule, smtp_d, 900));
    EXPECT_TRUE(book.set(smtp_all, LimitChange::rule(std::nullopt)));
    EXPECT_TRUE(book.empty());
    book.check();
}

TEST_F(Fixture, ARuleSuspensionHoldsMailUntilItsEnd) {
    tc.dest_recipient_limit = 1;
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::rule(hold_until(1600))));
    message("A", 2, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    EXPECT_TRUE(q.ready()); // live: not dead, not paused
    EXPECT_FALSE(q.may_start());
    EXPECT_EQ(s->select_transport(), nullptr);
    EXPECT_EQ(s->next_timer(), 1600);
    s->check_invariants();
    s->set_time(1599);
    EXPECT_EQ(s->select_transport(), nullptr);
    s->set_time(1600);
    EXPECT_EQ(drv.expired, (std::vector<std::string>{"rule smtp:d.example"}));
    EXPECT_FALSE(q.limits.rule);
    s->check_invariants();
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    EXPECT_EQ(deliver_all(*s, t), 2);
    // Nothing was deferred by the suspension.
    EXPECT_TRUE(drv.deferred.empty());
}

TEST_F(Fixture, ARuleOnATransportReachesEachQueueAndNewOnes) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 1, "d.example");
    ASSERT_TRUE(s->set_limit(smtp_all, LimitChange::rule(hold_until(0))));
    message("B", 1, "e.example"); // a queue made after the rule
    Transport& t = s->transport("smtp");
    EXPECT_TRUE(t.queue_by_name.at("d.example")->limits.rule);
    EXPECT_TRUE(t.queue_by_name.at("e.example")->limits.rule);
    EXPECT_FALSE(t.hold); // the transport itself is not suspended
    EXPECT_EQ(s->select_transport(), nullptr);
    s->check_invariants();
    // Ended early (cqmgrctl resume): both go.
    ASSERT_TRUE(s->set_limit(smtp_all, LimitChange::rule(std::nullopt)));
    EXPECT_FALSE(t.queue_by_name.at("d.example")->limits.rule);
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    EXPECT_EQ(deliver_all(*s, t), 2);
    EXPECT_TRUE(drv.expired.empty());
}

TEST_F(Fixture, ARuleCapNarrowsSelection) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::rule(RuleLimit{.concurrency = 1, .until = 0})));
    message("A", 3, "d.example");
    Transport& t = s->transport("smtp");
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    Entry* e = s->select_entry(t);
    ASSERT_TRUE(e);
    EXPECT_EQ(s->select_entry(t), nullptr); // one at a time
    s->delivery_done(e, DeliveryResult{});
    s->check_invariants();
}
