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

TEST(Gcra, NoHorizonNeverBooks) {
    RateSpec r = *parse_rate("50/s,1");
    double tat = 0;
    EXPECT_EQ(gcra_take(tat, 0, r).wait_ms, 0);
    auto d = gcra_take(tat, 5, r, 0);
    EXPECT_FALSE(d.allowed);
    EXPECT_DOUBLE_EQ(d.retry_after_ms, 15);
}

TEST(Gcra, BooksTheNextFreeMomentWithinTheHorizon) {
    RateSpec r = *parse_rate("50/s,1"); // 20 ms apart
    double tat = 0;
    auto first = gcra_take(tat, 100, r, 1000);
    EXPECT_TRUE(first.allowed);
    EXPECT_DOUBLE_EQ(first.wait_ms, 0);
    // Two more asked at the same moment: booked 20 and 40 ms on.
    auto second = gcra_take(tat, 100, r, 1000);
    EXPECT_TRUE(second.allowed);
    EXPECT_DOUBLE_EQ(second.wait_ms, 20);
    auto third = gcra_take(tat, 100, r, 1000);
    EXPECT_DOUBLE_EQ(third.wait_ms, 40);
    EXPECT_DOUBLE_EQ(tat, 160);
}

TEST(Gcra, BeyondTheHorizonIsRefusedUntilItIsWithin) {
    RateSpec r = *parse_rate("10/s,1"); // 100 ms apart
    double tat = 0;
    EXPECT_TRUE(gcra_take(tat, 0, r, 150).allowed); // now
    EXPECT_TRUE(gcra_take(tat, 0, r, 150).allowed); // at 100
    auto over = gcra_take(tat, 0, r, 150);          // at 200: 50 ms too far
    EXPECT_FALSE(over.allowed);
    EXPECT_DOUBLE_EQ(over.retry_after_ms, 50);
    EXPECT_DOUBLE_EQ(tat, 200); // a refusal books nothing
    auto later = gcra_take(tat, 50, r, 150);
    EXPECT_TRUE(later.allowed);
    EXPECT_DOUBLE_EQ(later.wait_ms, 150);
}

TEST(Gcra, BookedStartsKeepTheRateExactWhateverTheLateness) {
    // Two askers that each ask again only once their booked start has come
    // and 3 ms more have passed (a timer, a round trip, an agent): over 10 s
    // the starts are exactly 20 ms apart, 500 of them.  Asking again after
    // a refusal, with the same 3 ms, gets one start per 23 ms.
    RateSpec r = *parse_rate("50/s,1");
    auto run = [&](double horizon) {
        double tat = 0;
        double next_ask[2] = {0, 0};
        int starts = 0;
        for (double now = 0; now < 10'000; now += 0.5)
            for (double& ask : next_ask) {
                if (now < ask) continue;
                auto g = gcra_take(tat, now, r, horizon);
                if (g.allowed) {
                    starts += now + g.wait_ms < 10'000;
                    ask = now + g.wait_ms + 3;
                } else {
                    ask = now + g.retry_after_ms + 3;
                }
            }
        return starts;
    };
    EXPECT_EQ(run(gcra_booking_horizon_ms(r)), 500);
    EXPECT_LT(run(0), 480);
}

TEST(Gcra, BookingHorizonIsASecondOrOneInterval) {
    EXPECT_DOUBLE_EQ(gcra_booking_horizon_ms(*parse_rate("50/s,1")), 1000);
    EXPECT_DOUBLE_EQ(gcra_booking_horizon_ms(*parse_rate("1/min")), 60'000);
}
