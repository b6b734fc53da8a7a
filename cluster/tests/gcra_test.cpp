#include "cqmgr/cluster/gcra.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::cluster;

TEST(Gcra, BurstThenSteadySpacing) {
    RateSpec r = *parse_rate("10/s,3"); // one per 100 ms, 3 at once
    double tat = 0;
    double now = 1000;
    for (int i = 0; i < 3; i++)
        EXPECT_TRUE(gcra_take(tat, now, r).allowed) << i;
    auto denied = gcra_take(tat, now, r);
    EXPECT_FALSE(denied.allowed);
    EXPECT_DOUBLE_EQ(denied.retry_after_ms, 100);
    EXPECT_FALSE(gcra_take(tat, now + 99.9, r).allowed);
    EXPECT_TRUE(gcra_take(tat, now + 100, r).allowed);
    EXPECT_FALSE(gcra_take(tat, now + 100, r).allowed);
}

TEST(Gcra, BurstOfOneSpacesEveryStart) {
    RateSpec r = *parse_rate("50/s,1"); // 20 ms apart
    double tat = 0;
    EXPECT_TRUE(gcra_take(tat, 0, r).allowed);
    auto d = gcra_take(tat, 5, r);
    EXPECT_FALSE(d.allowed);
    EXPECT_DOUBLE_EQ(d.retry_after_ms, 15);
    EXPECT_TRUE(gcra_take(tat, 20, r).allowed);
}

TEST(Gcra, LongRunRateIsTheSpec) {
    // Ask every millisecond for 10 s: 50/s lets through 500, plus the burst.
    RateSpec r = *parse_rate("50/s,5");
    double tat = 0;
    int allowed = 0;
    for (int ms = 0; ms < 10'000; ms++)
        allowed += gcra_take(tat, ms, r).allowed;
    EXPECT_GE(allowed, 500);
    EXPECT_LE(allowed, 505);
}

TEST(Gcra, SubSecondFractionsAreKept) {
    RateSpec r = *parse_rate("3/s,1"); // 333.33 ms apart
    double tat = 0;
    EXPECT_TRUE(gcra_take(tat, 0, r).allowed);
    EXPECT_FALSE(gcra_take(tat, 333.33, r).allowed);
    EXPECT_TRUE(gcra_take(tat, 333.34, r).allowed); // the next is due at 666.673
    EXPECT_FALSE(gcra_take(tat, 666.67, r).allowed);
    EXPECT_TRUE(gcra_take(tat, 666.68, r).allowed);
}

TEST(Gcra, IdleTimeDoesNotBankMoreThanTheBurst) {
    RateSpec r = *parse_rate("10/s,2");
    double tat = 0;
    int allowed = 0;
    for (int i = 0; i < 10; i++)
        allowed += gcra_take(tat, 1'000'000, r).allowed;
    EXPECT_EQ(allowed, 2);
}
