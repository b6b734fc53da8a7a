// The isolation policy on a fake clock: a destination far slower than its
// transport's typical delivery, or one that times out, has its share
// halved down to 1, once per cohort sent under a share; fast deliveries
// double it back to the full share; a destination that died probes with 1
// delivery and reopens at its first fast success; a lowered share with no
// delivery for the forget time goes back to full.
#include "isolation_policy.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;

namespace {

using Outcome = IsolationPolicy::Outcome;
using Why = IsolationPolicy::Change::Why;
const IsolationPolicy::Key tarpit{"smtp", "tarpit.example"};
const IsolationPolicy::Key healthy{"smtp", "healthy.example"};
constexpr int full = 50;

// A policy whose transport has seen `n` deliveries of 100 ms to the
// healthy destination, the last ending at `t`.
IsolationPolicy warmed(int64_t& t, int n = 20) {
    IsolationPolicy p;
    for (int i = 0; i < n; ++i)
        EXPECT_FALSE(p.delivered(healthy, full, 20, Outcome::success, 100, t += 100));
    return p;
}

} // namespace

TEST(IsolationPolicy, NothingIsSlowBeforeTheTransportHasATypicalTime) {
    IsolationPolicy p;
    int64_t t = 1'000'000;
    // A transport that only knows slow deliveries: slow is what it is.
    for (int i = 0; i < 30; ++i)
        EXPECT_FALSE(p.delivered(tarpit, full, 5, Outcome::success, 30'000, t += 1000));
    EXPECT_EQ(p.lowered(tarpit), 0);
    EXPECT_EQ(p.typical_ms("smtp"), 30'000);
}

TEST(IsolationPolicy, SlowDeliveriesHalveTheShareOncePerCohort) {
    int64_t t = 1'000'000;
    IsolationPolicy p = warmed(t);
    EXPECT_EQ(p.typical_ms("smtp"), 100);
    // Five deliveries sent together at window 5 end 30 s later: the first
    // halves the share from the window, the rest were sent under it.
    int64_t sent = t;
    t = sent + 30'000;
    auto c = p.delivered(tarpit, full, 5, Outcome::success, t - sent, t);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->before, 0);
    EXPECT_EQ(c->after, 2);
    EXPECT_EQ(c->why, Why::slow);
    for (int i = 0; i < 4; ++i) {
        t += 10;
        EXPECT_FALSE(p.delivered(tarpit, full, 5, Outcome::success, t - sent, t));
    }
    EXPECT_EQ(p.lowered(tarpit), 2);
    // The next cohort, sent under the share of 2: down to 1, and no lower.
    sent = t;
    t += 30'000;
    c = p.delivered(tarpit, full, 5, Outcome::success, t - sent, t);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->before, 2);
    EXPECT_EQ(c->after, 1);
    sent = t;
    t += 30'000;
    EXPECT_FALSE(p.delivered(tarpit, full, 5, Outcome::success, t - sent, t));
    EXPECT_EQ(p.lowered(tarpit), 1);
    // The healthy destination keeps its share; slow mail does not move the
    // transport's typical time.
    EXPECT_EQ(p.lowered(healthy), 0);
    EXPECT_EQ(p.typical_ms("smtp"), 100);
}

TEST(IsolationPolicy, UnderTheFloorNothingIsSlow) {
    int64_t t = 1'000'000;
    IsolationPolicy p = warmed(t);
    // 9 s is 90 times the typical 100 ms, but under the 10 s floor.
    EXPECT_FALSE(p.delivered(tarpit, full, 5, Outcome::success, 9'000, t += 9'000));
    // 1 s deliveries of a healthy but farther destination stay unnoticed.
    EXPECT_FALSE(p.delivered(healthy, full, 5, Outcome::success, 1'000, t += 1'000));
    EXPECT_EQ(p.lowered(tarpit), 0);
}

TEST(IsolationPolicy, TimeoutsLowerTheShareWhateverTheirTime) {
    IsolationPolicy p; // no typical time needed
    int64_t t = 1'000'000;
    auto c = p.delivered(tarpit, full, 8, Outcome::timeout, 300'000, t += 300'000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, 4);
    EXPECT_EQ(c->why, Why::timeout);
    // A quick failure of another kind (connection refused) costs no agent time.
    EXPECT_FALSE(p.delivered(tarpit, full, 8, Outcome::failure, 5, t += 10));
    EXPECT_EQ(p.lowered(tarpit), 4);
}

TEST(IsolationPolicy, FastDeliveriesDoubleTheShareBackToFull) {
    int64_t t = 1'000'000;
    IsolationPolicy p = warmed(t);
    ASSERT_TRUE(p.delivered(tarpit, full, 20, Outcome::timeout, 300'000, t += 300'000));
    ASSERT_TRUE(p.delivered(tarpit, full, 20, Outcome::timeout, 1'000, t += 1'000));
    ASSERT_TRUE(p.delivered(tarpit, full, 20, Outcome::timeout, 1'000, t += 1'000));
    ASSERT_TRUE(p.delivered(tarpit, full, 20, Outcome::timeout, 1'000, t += 1'000));
    ASSERT_EQ(p.lowered(tarpit), 1);
    // A fast delivery sent before the last change does not count.
    EXPECT_FALSE(p.delivered(tarpit, full, 20, Outcome::success, 2'000, t += 100));
    int share = 1;
    std::vector<int> steps;
    for (int i = 0; i < 10 && p.lowered(tarpit) > 0; ++i) {
        auto c = p.delivered(tarpit, full, 20, Outcome::success, 100, t += 100);
        ASSERT_TRUE(c);
        EXPECT_EQ(c->before, share);
        EXPECT_EQ(c->why, Why::fast);
        share = c->after;
        steps.push_back(c->after);
    }
    EXPECT_EQ(steps, (std::vector<int>{2, 4, 8, 16, 32, 0}));
    EXPECT_EQ(p.lowered(tarpit), 0);
}

TEST(IsolationPolicy, ADeadDestinationProbesWithOneDelivery) {
    int64_t t = 1'000'000;
    IsolationPolicy p = warmed(t);
    auto c = p.died(tarpit, full, t);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->before, 0);
    EXPECT_EQ(c->after, 1);
    EXPECT_EQ(c->why, Why::probe);
    EXPECT_TRUE(p.probing(tarpit));
    // Dying again while probing changes nothing.
    EXPECT_FALSE(p.died(tarpit, full, t += 1000));
    // A failed or slow probe keeps it at 1.
    EXPECT_FALSE(p.delivered(tarpit, full, 5, Outcome::failure, 50, t += 300'000));
    EXPECT_FALSE(p.delivered(tarpit, full, 5, Outcome::success, 30'000, t += 30'000));
    EXPECT_TRUE(p.probing(tarpit));
    // The first fast success reopens it fully.
    c = p.delivered(tarpit, full, 5, Outcome::success, 80, t += 80);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->before, 1);
    EXPECT_EQ(c->after, 0);
    EXPECT_EQ(c->why, Why::probe);
    EXPECT_FALSE(p.probing(tarpit));
    EXPECT_EQ(p.lowered(tarpit), 0);
}

TEST(IsolationPolicy, AQuietLoweredShareIsGivenBack) {
    int64_t t = 1'000'000;
    IsolationSettings s;
    s.forget_ms = 3'600'000;
    IsolationPolicy p(s);
    ASSERT_TRUE(p.delivered(tarpit, full, 4, Outcome::timeout, 30'000, t += 30'000));
    EXPECT_TRUE(p.sweep(t + 3'599'999).empty());
    auto changes = p.sweep(t + 3'600'000);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].dest, tarpit);
    EXPECT_EQ(changes[0].before, 2);
    EXPECT_EQ(changes[0].after, 0);
    EXPECT_EQ(changes[0].why, Why::forget);
    EXPECT_EQ(p.lowered(tarpit), 0);
}

TEST(IsolationPolicy, AShareOfOneCannotBeLowered) {
    IsolationPolicy p;
    int64_t t = 1'000'000;
    EXPECT_FALSE(p.delivered(tarpit, 1, 5, Outcome::timeout, 30'000, t += 30'000));
    EXPECT_FALSE(p.died(tarpit, 1, t));
    EXPECT_TRUE(p.probing(tarpit));
}
