// The arrival index: the oldest of the active messages, with ties.
#include "arrival_index.hpp"

#include <gtest/gtest.h>
#include <memory>

namespace cqmgr::qmgr {
namespace {

// A message that arrived at sec.usec.
std::unique_ptr<Message> arrived(int64_t sec, int64_t usec, const char* id = "A") {
    auto m = std::make_unique<Message>();
    m->id = id;
    m->env.arrival_sec = sec;
    m->env.arrival_usec = usec;
    return m;
}

TEST(ArrivalIndex, EmptyHasNoOldest) {
    ArrivalIndex a;
    EXPECT_FALSE(a.oldest());
}

TEST(ArrivalIndex, OldestFollowsAddsAndRemovesWithTies) {
    ArrivalIndex a;
    auto late = arrived(200, 5), first = arrived(100, 7), twin = arrived(100, 7),
         next = arrived(100, 9);
    a.add(*late);
    a.add(*first);
    a.add(*twin);
    a.add(*next);
    EXPECT_EQ(a.oldest()->sec, 100);
    EXPECT_EQ(a.oldest()->usec, 7);
    a.remove(*first);
    EXPECT_EQ(a.oldest()->usec, 7); // the twin is still there
    a.remove(*twin);
    EXPECT_EQ(a.oldest()->usec, 9);
    a.remove(*next);
    EXPECT_EQ(a.oldest()->sec, 200);
    a.remove(*late);
    EXPECT_FALSE(a.oldest());
}

TEST(ArrivalIndex, ADestroyedMessageLeavesTheOrder) {
    ArrivalIndex a;
    auto kept = arrived(300, 0);
    a.add(*kept);
    {
        auto gone = arrived(100, 0);
        a.add(*gone);
        EXPECT_EQ(a.oldest()->sec, 100);
    }
    EXPECT_EQ(a.oldest()->sec, 300);
}

TEST(ArrivalIndex, MessagesOutOfOrderWithinAndAcrossSeconds) {
    ArrivalIndex a;
    auto b = arrived(500, 30), c = arrived(400, 90), d = arrived(500, 10), e = arrived(400, 20);
    a.add(*b);
    a.add(*c);
    a.add(*d);
    a.add(*e);
    EXPECT_EQ(a.oldest()->sec, 400);
    EXPECT_EQ(a.oldest()->usec, 20);
    a.remove(*e);
    EXPECT_EQ(a.oldest()->usec, 90);
    a.remove(*c);
    EXPECT_EQ(a.oldest()->sec, 500);
    EXPECT_EQ(a.oldest()->usec, 10);
    a.add(*e); // back again, in a second that had emptied
    EXPECT_EQ(a.oldest()->sec, 400);
}

TEST(ArrivalIndexDeath, RemovingAMessageNeverAddedPanics) {
    ArrivalIndex a;
    auto in = arrived(1, 0), out = arrived(2, 0, "B");
    a.add(*in);
    EXPECT_DEATH(a.remove(*out), "arrival index: B was never added");
}

TEST(ArrivalIndexDeath, AddingAMessageTwicePanics) {
    ArrivalIndex a;
    auto m = arrived(1, 0);
    a.add(*m);
    EXPECT_DEATH(a.add(*m), "arrival index: A added twice");
}

} // namespace
} // namespace cqmgr::qmgr
