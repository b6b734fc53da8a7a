// The arrival index: the oldest of the active messages, with ties.
#include "arrival_index.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

TEST(ArrivalIndex, EmptyHasNoOldest) {
    ArrivalIndex a;
    EXPECT_FALSE(a.oldest());
}

TEST(ArrivalIndex, OldestFollowsAddsAndRemovesWithTies) {
    ArrivalIndex a;
    a.add({200, 5});
    a.add({100, 7});
    a.add({100, 7});
    a.add({100, 9});
    EXPECT_EQ(a.oldest()->sec, 100);
    EXPECT_EQ(a.oldest()->usec, 7);
    a.remove({100, 7});
    EXPECT_EQ(a.oldest()->usec, 7); // the twin is still there
    a.remove({100, 7});
    EXPECT_EQ(a.oldest()->usec, 9);
    a.remove({100, 9});
    EXPECT_EQ(a.oldest()->sec, 200);
    a.remove({200, 5});
    EXPECT_FALSE(a.oldest());
    EXPECT_EQ(a.size(), 0u);
}

TEST(ArrivalIndexDeath, RemovingATimeNeverAddedPanics) {
    ArrivalIndex a;
    a.add({1, 0});
    EXPECT_DEATH(a.remove({2, 0}), "arrival index");
}

} // namespace
} // namespace cqmgr::qmgr
