#include "cqmgr/cluster/rate_spec.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::cluster;

TEST(RateSpec, PerSecondBurstDefaultsToCount) {
    auto r = parse_rate("50/s");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->count, 50);
    EXPECT_EQ(r->period_ms, 1000);
    EXPECT_EQ(r->burst, 50);
    EXPECT_DOUBLE_EQ(r->interval_ms(), 20.0);
}

TEST(RateSpec, PerMinuteWithBurst) {
    auto r = parse_rate("3000/min,100");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->count, 3000);
    EXPECT_EQ(r->period_ms, 60'000);
    EXPECT_EQ(r->burst, 100);
}

TEST(RateSpec, KumoSpellingsAndMultiples) {
    EXPECT_EQ(parse_rate("10/500ms")->period_ms, 500);
    EXPECT_EQ(parse_rate("200/2h")->period_ms, 7'200'000);
    EXPECT_EQ(parse_rate("1/day")->period_ms, 86'400'000);
    EXPECT_EQ(parse_rate("5/hr")->period_ms, 3'600'000);
    EXPECT_EQ(parse_rate(" 5 / sec , max_burst=1 ")->burst, 1);
    EXPECT_EQ(parse_rate("5/minute")->period_ms, 60'000);
}

TEST(RateSpec, RejectsWhatIsNotARate) {
    for (const char* bad : {"", "50", "0/s", "-1/s", "50/", "50/fortnight", "50/s,", "50/s,0",
                            "50/s,x", "x/s", "50/0s", "99999999999999999999/s"}) {
        auto r = parse_rate(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().value, bad);
        EXPECT_FALSE(r.error().message().empty()) << bad;
    }
    EXPECT_EQ(parse_rate("50/fortnight").error().kind, LimitError::Kind::rate_unit);
    EXPECT_EQ(parse_rate("50/fortnight").error().message(),
              "rate \"50/fortnight\": unknown period unit");
    EXPECT_EQ(parse_rate("50").error().message(), "rate \"50\": expected N/period[,burst]");
    EXPECT_EQ(parse_rate("x/s").error().kind, LimitError::Kind::rate_count);
    EXPECT_EQ(parse_rate("50/0s").error().kind, LimitError::Kind::rate_period);
    EXPECT_EQ(parse_rate("50/s,0").error().kind, LimitError::Kind::rate_burst);
    // Periods whose milliseconds overflow, or would not read back as a
    // count of milliseconds.
    EXPECT_EQ(parse_rate("1/1000000000000d").error().kind, LimitError::Kind::rate_period);
    EXPECT_EQ(parse_rate("1/400000d").error().kind, LimitError::Kind::rate_period);
    EXPECT_EQ(parse_rate("1/12000d")->period_ms, 12000 * int64_t{86'400'000});
}

// A period whose count times its unit's length would overflow, or lies
// beyond what the limits' arithmetic in nanoseconds holds (2^40 ms, about
// 34 years), is bad configuration; the longest one is still accepted.
TEST(RateSpec, RejectsAPeriodOutOfRange) {
    for (const char* bad : {"1/1099511627776d", "1/1099511627776day", "1/1099511627776h",
                            "1/1099511627776s", "1/1099511627777ms", "1/12726d"}) {
        auto r = parse_rate(bad);
        ASSERT_FALSE(r) << bad << " gave " << r->period_ms;
        EXPECT_EQ(r.error().kind, LimitError::Kind::rate_period) << bad;
    }
    EXPECT_EQ(parse_rate("1/1099511627776ms")->period_ms, int64_t{1} << 40);
    EXPECT_EQ(parse_rate("1/12725d")->period_ms, int64_t{12725} * 86'400'000);
}

TEST(RateSpec, TextRoundTrips) {
    auto r = parse_rate("3000/min,100");
    EXPECT_EQ(parse_rate(r->text()), *r);
}

TEST(Concurrency, Counts) {
    EXPECT_EQ(parse_concurrency("5"), 5);
    EXPECT_EQ(parse_concurrency(" 20 "), 20);
    for (const char* bad : {"", "0", "-3", "5/s", "x", "2000000"})
        EXPECT_FALSE(parse_concurrency(bad)) << bad;
    EXPECT_EQ(parse_concurrency("0").error().message(),
              "concurrency \"0\": expected a count of 1 or more");
}
