#include "cqmgr/protocol/messages.hpp"
#include "end_plan.hpp"
#include "test_params.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <random>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using cqmgr::qmgr::testing::params;

namespace {

queuefile::Envelope envelope(std::string sender, int64_t created) {
    queuefile::Envelope env;
    env.text.set(queuefile::EnvelopeText::sender, sender);
    env.create_time = created;
    return env;
}
} // namespace

TEST(EndPlan, TraceForVerifyRecordDelaySentAndNotifySuccess) {
    queuefile::Envelope env;
    EXPECT_FALSE(wants_trace(env));
    env.tflags = protocol::del_flag::record;
    EXPECT_TRUE(wants_trace(env));
    env.tflags = 0;
    env.rflags = queuefile::dsn_notify::success << 1;
    EXPECT_TRUE(wants_trace(env));
}

TEST(EndPlan, ExpiryUsesTheBounceLifetimeForNullSenders) {
    auto p = params("maximal_queue_lifetime = 2d\nbounce_queue_lifetime = 1d\n");
    int64_t day = 86400;
    EXPECT_EQ(undelivered_fate(envelope("a@b", 0), false, day, p), Undelivered::keep);
    EXPECT_EQ(undelivered_fate(envelope("", 0), false, day, p), Undelivered::expired);
    EXPECT_EQ(undelivered_fate(envelope("a@b", 0), false, 2 * day, p), Undelivered::expired);
    EXPECT_EQ(undelivered_fate(envelope("a@b", 0), true, 1, p), Undelivered::force_expired);
    EXPECT_STREQ(expiry_word(Undelivered::force_expired), "force-expired");
    EXPECT_STREQ(expiry_word(Undelivered::expired), "expired");
}

TEST(EndPlan, DelayWarningFromOneSecondBeforeItsTime) {
    auto p = params();
    auto env = envelope("a@b", 1000);
    env.warn_time = 2000;
    EXPECT_EQ(undelivered_fate(env, false, 1998, p), Undelivered::keep);
    EXPECT_EQ(undelivered_fate(env, false, 1999, p), Undelivered::warn);
    env.warn_time = -1; // sent already
    EXPECT_EQ(undelivered_fate(env, false, 5000, p), Undelivered::keep);
}

TEST(EndPlan, BackoffIsTheAgeWithinTheBounds) {
    auto p = params("minimal_backoff_time = 300s\nmaximal_backoff_time = 4000s\n");
    EXPECT_EQ(backoff(envelope("a@b", 1000), 1010, p), 300);
    EXPECT_EQ(backoff(envelope("a@b", 1000), 2000, p), 1000);
    EXPECT_EQ(backoff(envelope("a@b", 1000), 9000, p), 4000);
    EXPECT_EQ(backoff(envelope("a@b", 0), 9000, p), 300); // age unknown
    // A minimum above the maximum wins, as in stock.
    auto odd = params("minimal_backoff_time = 500s\nmaximal_backoff_time = 400s\n");
    EXPECT_EQ(backoff(envelope("a@b", 1000), 9000, odd), 500);
}

TEST(EndPlan, JitterSpreadsTheBackoffWithinItsPercentAndTheBounds) {
    auto p = params("minimal_backoff_time = 300s\nmaximal_backoff_time = 4000s\n");
    // Off: the delay as it is, whatever the random draw.
    EXPECT_EQ(jittered_backoff(1000, 0, 0.0, p), 1000);
    EXPECT_EQ(jittered_backoff(1000, 0, 1.0, p), 1000);
    // 20 %: the ends and the middle of the random range.
    EXPECT_EQ(jittered_backoff(1000, 20, 0.0, p), 800);
    EXPECT_EQ(jittered_backoff(1000, 20, 0.5, p), 1000);
    EXPECT_EQ(jittered_backoff(1000, 20, 1.0, p), 1200);
    EXPECT_EQ(jittered_backoff(1000, 20, 0.25, p), 900);
    // Bounded as stock bounds the backoff.
    EXPECT_EQ(jittered_backoff(300, 50, 0.0, p), 300);
    EXPECT_EQ(jittered_backoff(4000, 50, 1.0, p), 4000);
    EXPECT_EQ(jittered_backoff(4000, 50, 0.0, p), 2000);
    // With an injected uniform source, the draws cover the range evenly.
    std::mt19937_64 random(42);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    int below = 0, above = 0;
    int64_t lo = 1000, hi = 1000;
    for (int i = 0; i < 10000; ++i) {
        int64_t d = jittered_backoff(1000, 10, uniform(random), p);
        lo = std::min(lo, d);
        hi = std::max(hi, d);
        (d < 1000 ? below : above)++;
    }
    EXPECT_GE(lo, 900);
    EXPECT_LE(hi, 1100);
    EXPECT_LT(lo, 910);
    EXPECT_GT(hi, 1090);
    EXPECT_NEAR(below, 5000, 300);
    // The daemon's seeds differ from process to process (and call to call).
    EXPECT_NE(random_seed(), random_seed());
}
