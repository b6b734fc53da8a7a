// The token bucket of the recovery ramp, on a clock of the test's own.
#include "token_bucket.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

constexpr int64_t second = 1000000; // microseconds

TEST(TokenBucket, StartsFullAndEmptiesAfterTheBurst) {
    TokenBucket b(3, 3, 10 * second);
    EXPECT_TRUE(b.full(10 * second));
    for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(b.take(10 * second)) << i;
    EXPECT_FALSE(b.take(10 * second));
    EXPECT_FALSE(b.ready(10 * second));
}

TEST(TokenBucket, RefillsAtItsRateWithinTheSecond) {
    TokenBucket b(4, 4, 0);
    for (int i = 0; i < 4; ++i)
        b.take(0);
    EXPECT_FALSE(b.take(second / 4 - 1)); // not quite one token yet
    EXPECT_TRUE(b.take(second / 4));
    EXPECT_FALSE(b.take(second / 4));
    // Half a second more: two tokens.
    EXPECT_TRUE(b.take(3 * second / 4));
    EXPECT_TRUE(b.take(3 * second / 4));
    EXPECT_FALSE(b.take(3 * second / 4));
}

TEST(TokenBucket, KeepsNoMoreThanTheBurst) {
    TokenBucket b(2, 2, 0);
    b.take(0);
    b.take(0);
    // An hour idle gives back the burst, not 7,200 tokens.
    EXPECT_TRUE(b.full(3600 * second));
    EXPECT_DOUBLE_EQ(b.tokens(), 2.0);
    EXPECT_TRUE(b.take(3600 * second));
    EXPECT_TRUE(b.take(3600 * second));
    EXPECT_FALSE(b.take(3600 * second));
}

TEST(TokenBucket, ManySecondsGiveTheRateOnAverage) {
    TokenBucket b(120, 120, 0);
    int taken = 0;
    // Asked every millisecond for 10 s after the first burst: 120 + 1,200.
    for (int64_t t = 0; t <= 10 * second; t += 1000)
        while (b.take(t))
            ++taken;
    EXPECT_EQ(taken, 120 + 1200);
}

TEST(TokenBucket, ARateBelowOnePerSecond) {
    TokenBucket b(0.5, 1, 0);
    EXPECT_TRUE(b.take(0));
    EXPECT_FALSE(b.take(second));
    EXPECT_TRUE(b.take(2 * second));
}

TEST(TokenBucket, AClockThatGoesBackGivesNothing) {
    TokenBucket b(1, 1, 100 * second);
    EXPECT_TRUE(b.take(100 * second));
    EXPECT_FALSE(b.take(50 * second));
    // Counted from the earlier time now: a second after it, one token.
    EXPECT_TRUE(b.take(51 * second));
}

} // namespace
} // namespace cqmgr::qmgr
