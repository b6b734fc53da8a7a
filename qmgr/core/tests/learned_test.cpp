// Learned limits on a fake clock: a learned concurrency cap bounds
// selection below the window and apart from the administrator's cap; a
// learned rate delay means one delivery at a time and a pause after each;
// a queue created later picks the limit up; forgetting lifts it.
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

const AdminTarget smtp_d{"smtp", "d.example"};

// Selects entries of `t` until none is given; returns them.
std::vector<Entry*> select_all(Scheduler& s, Transport& t) {
    std::vector<Entry*> out;
    while (Entry* e = s.select_entry(t))
        out.push_back(e);
    return out;
}

} // namespace

TEST_F(Fixture, LearnedConcurrencyCapsSelectionApartFromTheAdminCap) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    make();
    message("A", 20, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    int wakeups = drv.wakeups;
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{3, 0})));
    EXPECT_FALSE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{3, 0}))); // unchanged
    EXPECT_GT(drv.wakeups, wakeups);
    EXPECT_EQ(q.limits.learned.concurrency, 3);
    EXPECT_EQ(q.window, 5);
    EXPECT_EQ(q.select_window(), 3);
    auto busy = select_all(*s, t);
    EXPECT_EQ(busy.size(), 3u);
    s->check_invariants();
    // The lower of the two caps counts; removing the admin's keeps the learned.
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::cap(AdminCap{2, 0, 0})));
    EXPECT_EQ(q.select_window(), 2);
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::cap(std::nullopt)));
    EXPECT_EQ(q.select_window(), 3);
    // Successes still move the window, the learned cap still bounds selection.
    for (int i = 0; i < 6; ++i) {
        s->delivery_done(busy.front(), DeliveryResult{});
        busy.erase(busy.begin());
        for (Entry* e : select_all(*s, t))
            busy.push_back(e);
        EXPECT_LE(q.busy_count(), 3);
        s->check_invariants();
    }
    EXPECT_GT(q.window, 5);
    // Forgetting lifts the cap at once.
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{})));
    EXPECT_FALSE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{})));
    EXPECT_EQ(q.limits.learned, LearnedLimit{});
    for (Entry* e : select_all(*s, t))
        busy.push_back(e);
    EXPECT_EQ(q.busy_count(), q.window);
    s->check_invariants();
}

TEST_F(Fixture, LearnedRateDelayRunsOneAtATimeAndPausesAfterEach) {
    tc.dest_recipient_limit = 1;
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{0, 7})));
    message("A", 3, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    EXPECT_EQ(q.select_window(), 1);
    Entry* e = s->select_entry(t);
    ASSERT_TRUE(e);
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->delivery_done(e, DeliveryResult{});
    EXPECT_TRUE(q.suspended);
    EXPECT_EQ(q.timer_due, 1007);
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->check_invariants();
    s->set_time(1006);
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->set_time(1007);
    e = s->select_entry(t);
    ASSERT_TRUE(e);
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->delivery_done(e, DeliveryResult{});
    s->check_invariants();
}

// A window's quota spent (the daemon's window model): no delivery starts
// until the hold's time, which ends by itself and leaves the quota; a
// hold replaced before its time is not ended by the old one's timer.
TEST_F(Fixture, LearnedHoldStopsSelectionUntilItsTime) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 4, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    LearnedLimit held{0, 0, 3, 61, 1010};
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(held)));
    EXPECT_TRUE(q.limits.stopped());
    EXPECT_EQ(s->select_entry(t), nullptr);
    EXPECT_EQ(s->next_timer(), 1010);
    s->check_invariants();
    s->set_time(1009);
    EXPECT_EQ(s->select_entry(t), nullptr);
    int wakeups = drv.wakeups;
    s->set_time(1010);
    EXPECT_GT(drv.wakeups, wakeups);
    EXPECT_EQ(q.limits.learned, (LearnedLimit{0, 0, 3, 61, 0}));
    EXPECT_TRUE(drv.expired.empty()); // the daemon knows the time itself
    EXPECT_TRUE(s->select_entry(t));
    s->check_invariants();
    // Held again, then the hold moved: the first timer ends nothing.
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{0, 0, 3, 61, 1020})));
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{0, 0, 3, 61, 1030})));
    s->set_time(1020);
    EXPECT_EQ(q.limits.learned.held_until, 1030);
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->check_invariants();
    s->set_time(1030);
    EXPECT_TRUE(s->select_entry(t));
    // A hold alone (nothing else learned) leaves nothing when it ends.
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{0, 0, 0, 0, 1040})));
    s->set_time(1040);
    EXPECT_TRUE(s->limits().learned().empty());
    s->check_invariants();
}

TEST_F(Fixture, LearnedLimitReachesAQueueCreatedLater) {
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{2, 0})));
    message("A", 1, "other.example");
    Transport& t = s->transport("smtp");
    EXPECT_EQ(t.queue_by_name.at("other.example")->limits.learned, LearnedLimit{});
    message("B", 1, "d.example");
    EXPECT_EQ(t.queue_by_name.at("d.example")->limits.learned, (LearnedLimit{2, 0}));
    s->check_invariants();
}

namespace {

// One-recipient entries; smtp/d.example has learned a pause of 7 s and
// message "A" has 4 recipients there; its first entry is in delivery.
struct LearnedPause : Fixture {
    Transport* t = nullptr;
    Queue* q = nullptr;
    Entry* first = nullptr;
    // A deferral that no receiver saw (DeliveryResult::unseen).
    DeliveryResult unseen{DeliveryResult::Kind::replied, -1, {}, true};

    void start() {
        tc.dest_recipient_limit = 1;
        make();
        ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::learned(LearnedLimit{0, 7})));
        message("A", 4, "d.example");
        t = &s->transport("smtp");
        q = t->queue_by_name.at("d.example").get();
        first = s->select_entry(*t);
        ASSERT_TRUE(first);
    }
};

} // namespace

// A learned rate delay paces what the receiver sees: a delivery the driver
// knows no receiver saw (its agent deferred it without a word, as one does
// whose queue file postsuper -r had moved away) is not followed by a
// pause; the next entry goes at once.  Any other outcome is, a crash
// included (the receiver may have seen that one).
TEST_F(LearnedPause, NoPauseAfterAnUnseenDelivery) {
    start();
    s->delivery_done(first, unseen);
    EXPECT_FALSE(q->suspended);
    Entry* e = s->select_entry(*t);
    ASSERT_TRUE(e);
    EXPECT_EQ(s->select_entry(*t), nullptr); // still one at a time
    s->check_invariants();
    // A deferral the receiver gave is paced.
    s->delivery_done(e, DeliveryResult{DeliveryResult::Kind::replied, -1, {}});
    EXPECT_TRUE(q->suspended);
    EXPECT_EQ(q->timer_due, 1007);
    s->set_time(1007);
    e = s->select_entry(*t);
    ASSERT_TRUE(e);
    // So is a crash.
    s->delivery_done(e, DeliveryResult{DeliveryResult::Kind::crashed, 0, {}});
    EXPECT_TRUE(q->suspended);
    EXPECT_EQ(q->timer_due, 1014);
    s->check_invariants();
}

// A configured destination rate delay pauses after every delivery, as
// stock's does; a learned one longer than it adds nothing after an unseen
// delivery.
TEST_F(LearnedPause, AConfiguredRateDelayStillPausesAfterAnUnseenDelivery) {
    tc.dest_rate_delay = 5;
    start();
    s->delivery_done(first, unseen);
    EXPECT_TRUE(q->suspended);
    EXPECT_EQ(q->timer_due, 1005);
    s->set_time(1005);
    Entry* e = s->select_entry(*t);
    ASSERT_TRUE(e);
    s->delivery_done(e, DeliveryResult{});
    EXPECT_EQ(q->timer_due, 1012);
    s->check_invariants();
}
