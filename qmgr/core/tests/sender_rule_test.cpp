// Reply rules' bounds on one sender group's mail (sender_rule.cpp): a
// hold, a cap or a pause of the group's mail on one queue, while other
// senders' mail for the same destination goes on; kept by name, ended at
// its time (told to the driver) or when removed, and then the mail it
// held goes at once.
#include "core_access.hpp"
#include "scheduler_fixture.hpp"

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

const AdminTarget smtp_d{"smtp", "d.example"};

struct SenderRules : Fixture {
    // `n` messages "PREFIX0".. of `group` for `queue`.
    void many(char prefix, SenderGroup group, int n, const std::string& queue = "d.example") {
        for (int i = 0; i < n; ++i)
            sent(prefix + std::to_string(i), group, 1, queue);
    }
};

TEST_F(SenderRules, AHoldStopsOnlyItsGroupsMailUntilItsTime) {
    make_wide(10);
    // Group 1 has no limit of its own: the rule alone bounds it.
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.hold = true, .until = 1600}));
    many('c', 1, 4);
    many('t', 0, 3);
    many('o', 2, 2); // another group, without a rule
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(count(busy, 'c'), 0);
    EXPECT_EQ(count(busy, 't'), 3);
    EXPECT_EQ(count(busy, 'o'), 2);
    EXPECT_EQ(s->select_transport(), nullptr);
    // The same group elsewhere is not held.
    sent("x", 1, 1, "e.example");
    ASSERT_EQ(fill().size(), 1u);
    s->set_time(1599);
    EXPECT_TRUE(fill().empty());
    int wakeups = drv.wakeups;
    s->set_time(1600);
    EXPECT_GT(drv.wakeups, wakeups);
    ASSERT_EQ(drv.expired.size(), 1u);
    EXPECT_EQ(drv.expired[0], "sender 1 smtp:d.example");
    EXPECT_EQ(count(fill(), 'c'), 4);
}

TEST_F(SenderRules, MailThatWaitsAlreadyIsBoundToo) {
    make_wide(2);
    // Group 1 has mail waiting, and one delivery in flight, before its
    // first rule: its peers get their parts then, with their entries.
    many('c', 1, 4);
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 2u);
    deliver(busy[0]);
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.hold = true}));
    s->check_invariants();
    EXPECT_TRUE(fill().empty());
    deliver(busy[1]);
    EXPECT_TRUE(fill().empty());
    // Removed by the driver: the mail goes at once, and the group's mail
    // stays counted (its parts stay) without a bound.
    int wakeups = drv.wakeups;
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, std::nullopt));
    EXPECT_FALSE(s->set_sender_rule(smtp_d, 1, std::nullopt));
    EXPECT_GT(drv.wakeups, wakeups);
    EXPECT_EQ(fill().size(), 2u);
    EXPECT_TRUE(drv.expired.empty());
}

TEST_F(SenderRules, AThrottleCapsTheGroupOnItsQueueWithinItsLimit) {
    make_wide(10);
    SenderLimit limit;
    limit.concurrency = 3;
    s->set_sender_limit(1, limit);
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.concurrency = 1}));
    // The same rule again changes nothing.
    EXPECT_FALSE(s->set_sender_rule(smtp_d, 1, RuleLimit{.concurrency = 1}));
    many('c', 1, 4);
    many('e', 1, 4, "e.example");
    many('t', 0, 2);
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(count(busy, 'c'), 1);
    EXPECT_EQ(count(busy, 'e'), 3); // the group's own limit there
    EXPECT_EQ(count(busy, 't'), 2);
    // One of the group's deliveries on d.example ends: the next goes.
    for (Entry* e : busy)
        if (e->message->id[0] == 'c') deliver(e);
    std::vector<Entry*> next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->id[0], 'c');
}

TEST_F(SenderRules, APausePacesTheGroupAfterEachDelivery) {
    make_wide(10);
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.pause = 30}));
    many('c', 1, 3);
    many('t', 0, 2);
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(count(busy, 'c'), 1); // one at a time
    EXPECT_EQ(count(busy, 't'), 2);
    for (Entry* e : busy)
        deliver(e);
    EXPECT_TRUE(fill().empty());
    EXPECT_EQ(s->next_timer(), 1030);
    s->set_time(1029);
    EXPECT_TRUE(fill().empty());
    s->set_time(1030);
    busy = fill();
    ASSERT_EQ(busy.size(), 1u);
    // An entry given back without an attempt does not pause the group.
    s->entry_unselect(busy[0]);
    s->check_invariants();
    EXPECT_EQ(fill().size(), 1u);
}

TEST_F(SenderRules, ARuleOutlastsTheGroupsMailOnItsQueue) {
    make_wide(10);
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.concurrency = 1, .until = 2000}));
    sent("c0", 1);
    for (Entry* e : fill())
        deliver(e);
    Transport& t = s->transport("smtp");
    EXPECT_TRUE(t.senders.by_key.empty()); // the part and load went
    // Mail of the group that comes later finds the rule.
    many('c', 1, 3);
    EXPECT_EQ(fill().size(), 1u);
    // Another transport's queue of the same name is not bound by it.
    sent("r", 1, 3, "d.example", "relay");
    EXPECT_EQ(fill().size(), 3u);
}

// A rule ends at its time while its transport is not in memory (another
// host's action on a group, taken before any mail of that transport came
// here), and the group's mail that comes later goes.
TEST_F(SenderRules, ARuleEndsAtItsTimeWithoutItsTransport) {
    make_wide(10);
    const AdminTarget relay_d{"relay", "d.example"};
    ASSERT_TRUE(s->set_sender_rule(relay_d, 1, RuleLimit{.hold = true, .until = 1600}));
    s->set_time(1600);
    EXPECT_EQ(drv.expired, (std::vector<std::string>{"sender 1 relay:d.example"}));
    s->check_invariants();
    sent("c", 1, 2, "d.example", "relay");
    EXPECT_EQ(fill().size(), 2u);
}

TEST_F(SenderRules, AStoppedCandidateIsFreedWhenTheRuleEnds) {
    tc.slot_cost = 2;
    tc.min_slots = 1;
    make_wide(100);
    Transport& t = s->transport("smtp");
    sent("A", 0, 40);
    for (int i = 0; i < 10; ++i)
        ASSERT_EQ(s->select_entry(t)->message->id, "A");
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.hold = true, .until = 1100}));
    // G is older than T: without the rule it would preempt A.
    Entry* e = younger_goes(t, "G", 1, "T");
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->message->id, "T");
    Job& g = *find_job(*msgs[1], t);
    EXPECT_TRUE(t.is_blocker(g));
    s->check_invariants();
    s->set_time(1100);
    EXPECT_FALSE(t.is_blocker(g));
    s->check_invariants();
}

TEST_F(SenderRules, AReplacedRuleKeepsItsNewTimeOnly) {
    make_wide(10);
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.hold = true, .until = 1100}));
    ASSERT_TRUE(s->set_sender_rule(smtp_d, 1, RuleLimit{.concurrency = 1, .until = 1200}));
    many('c', 1, 3);
    EXPECT_EQ(fill().size(), 1u);
    s->set_time(1100); // the old time: nothing ends
    EXPECT_TRUE(drv.expired.empty());
    s->check_invariants();
    s->set_time(1200);
    EXPECT_EQ(drv.expired.size(), 1u);
    EXPECT_EQ(fill().size(), 2u);
}

} // namespace
