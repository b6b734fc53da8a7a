// Sender groups (sender.cpp): a group at its limit on a destination is
// passed over, other senders' mail for the same destination goes ahead
// and pays nothing for it, the group's rate paces its starts, and a load
// outlives its messages while its rate remembers them.
#include "core_access.hpp"
#include "scheduler_fixture.hpp"

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

struct Senders : Fixture {
    static SenderLimit concurrency(int n) {
        SenderLimit l;
        l.concurrency = n;
        return l;
    }
    static SenderLimit rate(int64_t count, int64_t period_s, int64_t burst) {
        SenderLimit l;
        l.rate_count = count;
        l.rate_period_ms = period_s * 1000;
        l.rate_burst = burst;
        return l;
    }
};

TEST_F(Senders, ACampaignAtItsLimitLetsOtherSendersGo) {
    make_wide(10);
    s->set_sender_limit(1, concurrency(2));
    for (int i = 0; i < 20; ++i)
        sent("c" + std::to_string(i), 1);
    for (int i = 0; i < 3; ++i)
        sent("t" + std::to_string(i), 0);
    std::vector<Entry*> busy = fill();
    // Two of the campaign, then the trickle behind it, and no connection
    // that the campaign alone could use.
    EXPECT_EQ(count(busy, 'c'), 2);
    EXPECT_EQ(count(busy, 't'), 3);
    EXPECT_EQ(busy.size(), 5u);
    EXPECT_EQ(s->select_transport(), nullptr);
    // One of the campaign's deliveries ends: the next one goes.
    deliver(busy[0]);
    std::vector<Entry*> next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->id, "c2");
    // A trickle message that comes now goes at once, while the campaign
    // is at its limit.
    sent("t3", 0);
    next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->id, "t3");
}

TEST_F(Senders, GroupsHaveAllowancesOfTheirOwn) {
    make_wide(10);
    s->set_sender_limit(1, concurrency(1));
    s->set_sender_limit(2, concurrency(2));
    for (int i = 0; i < 5; ++i) {
        sent("a" + std::to_string(i), 1);
        sent("b" + std::to_string(i), 2);
    }
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(count(busy, 'a'), 1);
    EXPECT_EQ(count(busy, 'b'), 2);
    // Per destination: the same group elsewhere has an allowance of its own.
    sent("x", 1, 1, "e.example");
    std::vector<Entry*> next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->id, "x");
}

TEST_F(Senders, AStoppedCandidateCostsTheCurrentJobNoSlots) {
    tc.slot_cost = 2;
    tc.min_slots = 1;
    make_wide(100);
    s->set_sender_limit(1, concurrency(1));
    Transport& t = s->transport("smtp");
    sent("A", 0, 40);
    for (int i = 0; i < 10; ++i)
        ASSERT_EQ(s->select_entry(t)->message->id, "A");
    // G0 takes the group's one place (it preempts A, as any small job).
    sent("G0", 1);
    ASSERT_EQ(s->select_entry(t)->message->id, "G0");
    Job& a = *find_job(*msgs[0], t);
    int slots = a.slots_available;
    // G1 is older than T: without the sender limit it would preempt A.
    Entry* e = younger_goes(t, "G1", 1, "T");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->message->id, "T");
    // A paid for T only.
    EXPECT_EQ(a.slots_available, slots - t.cfg.slot_cost);
    EXPECT_TRUE(t.is_blocker(*find_job(*msgs[2], t)));
    s->check_invariants();
}

TEST_F(Senders, TheRatePacesStarts) {
    make_wide(10);
    // One start every 5 seconds, two at once after a quiet spell.
    s->set_sender_limit(1, rate(1, 5, 2));
    for (int i = 0; i < 6; ++i)
        sent("c" + std::to_string(i), 1);
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(busy.size(), 2u);
    for (Entry* e : busy)
        deliver(e);
    EXPECT_TRUE(fill().empty());
    ASSERT_TRUE(s->next_timer().has_value());
    s->set_time(1004);
    EXPECT_TRUE(fill().empty());
    int wakeups = drv.wakeups;
    s->set_time(1005);
    EXPECT_GT(drv.wakeups, wakeups);
    busy = fill();
    ASSERT_EQ(busy.size(), 1u);
    EXPECT_EQ(busy[0]->message->id, "c2");
    deliver(busy[0]);
    s->set_time(1010);
    EXPECT_EQ(fill().size(), 1u);
}

TEST_F(Senders, ARateOfSeveralASecondIsNotHeldToOneASecond) {
    // 1140 a minute is 19 a second: the core's clock of whole seconds
    // must not make it one a second.
    make_wide(1000);
    s->set_sender_limit(1, rate(1140, 60, 1));
    for (int i = 0; i < 400; ++i)
        sent("c" + std::to_string(i), 1);
    int started = 0;
    for (int second = 0; second < 10; ++second) {
        s->set_time(1000 + second);
        std::vector<Entry*> busy = fill();
        // Never more in one second than the rate allows in it.
        EXPECT_LE(busy.size(), 19u);
        started += static_cast<int>(busy.size());
        for (Entry* e : busy)
            deliver(e);
    }
    EXPECT_GE(started, 189);
    EXPECT_LE(started, 191);
    s->check_invariants();
}

TEST_F(Senders, TheRateRemembersMessagesThatAreGone) {
    make_wide(10);
    s->set_sender_limit(1, rate(1, 60, 1));
    sent("c0", 1);
    std::vector<Entry*> first = fill();
    ASSERT_EQ(first.size(), 1u);
    deliver(first[0]);
    // The load stays while its rate is ahead of the clock...
    Transport& t = s->transport("smtp");
    EXPECT_EQ(t.senders.by_key.size(), 1u);
    sent("c1", 1);
    EXPECT_TRUE(fill().empty());
    s->set_time(1060);
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 1u);
    deliver(busy[0]);
    // ...and goes when it is not any more.
    s->set_time(1120);
    s->check_invariants();
    EXPECT_TRUE(t.senders.by_key.empty());
    EXPECT_EQ(t.senders.free.size(), t.senders.loads.size());
}

TEST_F(Senders, AnEntryGivenBackGivesItsPlaceBack) {
    make_wide(10);
    s->set_sender_limit(1, concurrency(1));
    sent("c0", 1);
    sent("c1", 1);
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 1u);
    s->entry_unselect(busy[0]);
    s->check_invariants();
    // One of the two goes (c0's job, linked again, is behind c1's: both
    // came at the same second), and only one.
    busy = fill();
    EXPECT_EQ(busy.size(), 1u);
}

TEST_F(Senders, AGroupWithoutALimitIsNoGroup) {
    make_wide(10);
    for (int i = 0; i < 5; ++i)
        sent("c" + std::to_string(i), 7);
    EXPECT_EQ(fill().size(), 5u);
    EXPECT_TRUE(s->transport("smtp").senders.loads.empty());
}

TEST_F(Senders, TheRetryTransportIsNotLimited) {
    // The retry transport (no concurrency limit) starts at a window of 5.
    tc.dest_recipient_limit = 1;
    tc.dest_concurrency_limit = 1;
    tc.init_dest_concurrency = 5;
    tc.fail_cohort_limit = 1;
    make();
    s->set_sender_limit(1, concurrency(1));
    for (int i = 0; i < 3; ++i)
        sent("c" + std::to_string(i), 1);
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 1u);
    // The destination dies: its waiting entries go to the retry
    // transport, whose agent takes them all at once.
    s->delivery_done(
        busy[0], DeliveryResult{DeliveryResult::Kind::replied, -1, {"4.4.1", "connect refused"}});
    s->check_invariants();
    EXPECT_EQ(fill().size(), 2u);
}

} // namespace
