// The bounds on one destination (Limits): how they combine into the window
// selection uses, and how the book keeps them by name (LimitBook), without
// a scheduler.
#include "cqmgr/core/limit_book.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;

namespace {

const AdminTarget smtp_d{"smtp", "d.example"};

} // namespace

TEST(Limits, NoBoundLeavesTheWindow) {
    Limits l;
    EXPECT_EQ(l.window(5), 5);
    EXPECT_EQ(l.window(1), 1);
    EXPECT_EQ(l.window(0), 0); // dead stays dead
    EXPECT_FALSE(l.stopped());
    EXPECT_EQ(l.pause(), 0);
}

TEST(Limits, EachBoundAloneLowersTheWindow) {
    EXPECT_EQ(LimitChange::cap(AdminCap{3, 0, 0}).value.window(5), 3);
    EXPECT_EQ(LimitChange::learned(LearnedLimit{2, 0}).value.window(5), 2);
    EXPECT_EQ(LimitChange::share(4).value.window(5), 4);
    EXPECT_EQ(LimitChange::gate(1).value.window(5), 1);
    // A closed gate gives no room at all; the others are at least 1.
    EXPECT_EQ(LimitChange::gate(0).value.window(5), 0);
}

TEST(Limits, BoundsAboveTheWindowLeaveIt) {
    Limits l;
    l.cap = AdminCap{10, 0, 0};
    l.learned.concurrency = 10;
    l.share = 10;
    l.gate = 10;
    EXPECT_EQ(l.window(5), 5);
    EXPECT_EQ(l.window(10), 10);
    EXPECT_EQ(l.window(0), 0);
}

TEST(Limits, TheSmallestBoundWins) {
    // Each bound in turn is the smallest of the four.
    for (int smallest = 0; smallest < 4; ++smallest) {
        Limits l;
        l.cap = AdminCap{smallest == 0 ? 2 : 7, 0, 0};
        l.learned.concurrency = smallest == 1 ? 2 : 6;
        l.share = smallest == 2 ? 2 : 5;
        l.gate = smallest == 3 ? 2 : 4;
        EXPECT_EQ(l.window(9), 2) << "smallest " << smallest;
        EXPECT_EQ(l.window(1), 1) << "smallest " << smallest;
    }
    // No share (0) and no learned concurrency (0) are no bounds, not zero.
    Limits l;
    l.cap = AdminCap{3, 0, 0};
    EXPECT_EQ(l.window(5), 3);
}

TEST(Limits, ALearnedPauseMeansOneAtATime) {
    Limits l;
    l.learned = LearnedLimit{4, 7};
    EXPECT_EQ(l.pause(), 7);
    EXPECT_EQ(l.window(5), 1);
    EXPECT_EQ(l.window(1), 1);
    EXPECT_EQ(l.window(0), 0); // not more than the window
    l.gate = 0;
    EXPECT_EQ(l.window(5), 0); // nor than the gate
    l.gate.reset();
    l.learned.concurrency = 0;
    EXPECT_EQ(l.window(20), 1); // a pause alone is a bound
}

TEST(Limits, AHoldStopsWithoutNarrowing) {
    Limits l = LimitChange::hold(AdminHold{0, "maintenance", 0}).value;
    EXPECT_TRUE(l.stopped());
    EXPECT_EQ(l.window(5), 5); // in flight still counts against the window
    EXPECT_FALSE(LimitChange::cap(AdminCap{1, 0, 0}).value.stopped());
}

TEST(Limits, AChangeCarriesOneBound) {
    LimitChange c = LimitChange::share(3);
    EXPECT_EQ(c.which, Bound::share);
    Limits want;
    want.share = 3;
    EXPECT_EQ(c.value, want);
    EXPECT_EQ(LimitChange::gate(std::nullopt).value, Limits{});
    EXPECT_EQ(LimitChange::hold(std::nullopt).value, Limits{});
    EXPECT_EQ(LimitChange::learned(LearnedLimit{}).value, Limits{});
    EXPECT_EQ(LimitChange::cap(AdminCap{2, 0, 0}).value.cap, (AdminCap{2, 0, 0}));
    EXPECT_EQ(LimitChange::gate(0).value.gate, 0);
}

TEST(LimitBook, KeepsEachBoundByName) {
    LimitBook book;
    EXPECT_TRUE(book.empty());
    EXPECT_TRUE(book.set(smtp_d, LimitChange::cap(AdminCap{2, 0, 0})));
    EXPECT_FALSE(book.set(smtp_d, LimitChange::cap(AdminCap{2, 0, 0}))); // unchanged
    EXPECT_TRUE(book.set(smtp_d, LimitChange::learned(LearnedLimit{3, 0})));
    EXPECT_TRUE(book.set(smtp_d, LimitChange::share(4)));
    EXPECT_FALSE(book.empty());
    Limits l = book.covering("smtp", "d.example", 0);
    EXPECT_EQ(l.cap, (AdminCap{2, 0, 0}));
    EXPECT_EQ(l.learned, (LearnedLimit{3, 0}));
    EXPECT_EQ(l.share, 4);
    EXPECT_FALSE(l.hold);
    EXPECT_FALSE(l.gate);
    EXPECT_EQ(l.window(10), 2);
    // Another queue, or the same name on another transport, has none of it.
    EXPECT_EQ(book.covering("smtp", "other.example", 0), Limits{});
    EXPECT_EQ(book.covering("relay", "d.example", 0), Limits{});
    // Empty values remove them.
    EXPECT_TRUE(book.set(smtp_d, LimitChange::cap(std::nullopt)));
    EXPECT_FALSE(book.set(smtp_d, LimitChange::cap(std::nullopt)));
    EXPECT_TRUE(book.set(smtp_d, LimitChange::learned(LearnedLimit{})));
    EXPECT_TRUE(book.set(smtp_d, LimitChange::share(0)));
    EXPECT_TRUE(book.empty());
    book.check();
}

TEST(LimitBook, AQueueTakesItsOwnHoldAndCapBeforeItsNames) {
    LimitBook book;
    ASSERT_TRUE(book.set({"", "d.example"}, LimitChange::hold(AdminHold{0, "bare", 0})));
    ASSERT_TRUE(book.set({"", "d.example"}, LimitChange::cap(AdminCap{1, 0, 0})));
    EXPECT_EQ(book.covering("relay", "d.example", 0).hold->reason, "bare");
    EXPECT_EQ(book.covering("relay", "d.example", 0).cap->concurrency, 1);
    ASSERT_TRUE(book.set(smtp_d, LimitChange::hold(AdminHold{0, "own", 0})));
    ASSERT_TRUE(book.set(smtp_d, LimitChange::cap(AdminCap{3, 0, 0})));
    EXPECT_EQ(book.covering("smtp", "d.example", 0).hold->reason, "own");
    EXPECT_EQ(book.covering("smtp", "d.example", 0).cap->concurrency, 3);
    EXPECT_EQ(book.covering("relay", "d.example", 0).hold->reason, "bare");
    // A transport's hold is the transport's, not its queues'.
    ASSERT_TRUE(book.set({"smtp", ""}, LimitChange::hold(AdminHold{0, "all", 0})));
    EXPECT_EQ(book.transport_hold("smtp")->reason, "all");
    EXPECT_FALSE(book.transport_hold("relay"));
    EXPECT_FALSE(book.covering("smtp", "other.example", 0).hold);
    book.check();
}

TEST(LimitBook, TheLowerOfTheFullAndTheLoweredShare) {
    LimitBook book;
    EXPECT_EQ(book.covering("smtp", "d.example", 50).share, 50);
    ASSERT_TRUE(book.set(smtp_d, LimitChange::share(4)));
    EXPECT_EQ(book.covering("smtp", "d.example", 50).share, 4);
    EXPECT_EQ(book.covering("smtp", "d.example", 2).share, 2);
    EXPECT_EQ(book.covering("smtp", "d.example", 0).share, 4); // no full share
    EXPECT_EQ(book.covering("smtp", "other.example", 50).share, 50);
}

TEST(LimitBook, AHoldOrCapEndsOnlyAtItsOwnTime) {
    LimitBook book;
    ASSERT_TRUE(book.set(smtp_d, LimitChange::hold(AdminHold{1600, "", 0})));
    ASSERT_TRUE(book.set(smtp_d, LimitChange::hold(AdminHold{2000, "longer", 0})));
    EXPECT_FALSE(book.expire(Bound::hold, smtp_d, 1600)); // replaced since
    EXPECT_TRUE(book.covering("smtp", "d.example", 0).hold);
    EXPECT_TRUE(book.expire(Bound::hold, smtp_d, 2000));
    EXPECT_FALSE(book.covering("smtp", "d.example", 0).hold);
    ASSERT_TRUE(book.set(smtp_d, LimitChange::cap(AdminCap{2, 1300, 0})));
    EXPECT_FALSE(book.expire(Bound::hold, smtp_d, 1300)); // a cap is not a hold
    EXPECT_TRUE(book.expire(Bound::cap, smtp_d, 1300));
    EXPECT_TRUE(book.empty());
}

TEST(LimitBookDeathTest, RefusesWhatABoundCannotName) {
    LimitBook book;
    EXPECT_DEATH(book.set({"smtp", ""}, LimitChange::cap(AdminCap{2, 0, 0})), "no queue");
    EXPECT_DEATH(book.set(smtp_d, LimitChange::cap(AdminCap{0, 0, 0})), "concurrency 0");
    EXPECT_DEATH(book.set({"", "d.example"}, LimitChange::learned(LearnedLimit{1, 0})),
                 "not one queue");
    EXPECT_DEATH(book.set({"smtp", ""}, LimitChange::share(1)), "not one queue");
    EXPECT_DEATH(book.set(smtp_d, LimitChange::gate(1)), "not kept by name");
}
