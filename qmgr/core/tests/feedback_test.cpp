// The concurrency feedback: its value at a window, and how it moves a
// queue's window.
#include "cqmgr/core/feedback.hpp"
#include "fake_driver.hpp"
#include "window.hpp"

#include <gtest/gtest.h>
#include <utility>
#include <vector>

using namespace cqmgr::core;

TEST(Feedback, ValueAtAWindow) {
    Feedback constant{Feedback::Kind::constant, 0.5};
    EXPECT_DOUBLE_EQ(constant.value(7), 0.5);
    Feedback per_window{Feedback::Kind::per_window, 1};
    EXPECT_DOUBLE_EQ(per_window.value(4), 0.25);
    EXPECT_DOUBLE_EQ(per_window.value(0), 1); // a window below 1 counts as 1
    Feedback per_sqrt{Feedback::Kind::per_sqrt_window, 1};
    EXPECT_DOUBLE_EQ(per_sqrt.value(4), 0.5);
}

// The window's moves alone (window.hpp), on a queue outside any scheduler:
// the driver hears each step.
namespace {

struct Steps : test::FakeDriver {
    std::vector<std::pair<bool, double>> steps; // (positive, step)
    void queue_feedback(const Queue&, bool positive, double step) override {
        steps.emplace_back(positive, step);
    }
};

struct Window : ::testing::Test {
    Steps steps_driver;
    // The core's calls to it (driver_calls.hpp), as the units make them.
    DriverCalls drv{steps_driver};
    Transport t;
    Queue q;
    void SetUp() override {
        t.cfg.dest_concurrency_limit = 20;
        t.cfg.init_dest_concurrency = 10;
        t.cfg.pos_feedback = {Feedback::Kind::per_window, 1};
        t.cfg.neg_feedback = {Feedback::Kind::per_window, 1};
        q.transport = &t;
        q.window = 5;
    }
};

} // namespace

TEST_F(Window, GrowsByOneAfterAWindowOfSuccesses) {
    for (int i = 0; i < 4; ++i)
        window_grow(q, drv);
    EXPECT_EQ(q.window, 5);
    window_grow(q, drv);
    EXPECT_EQ(q.window, 6);
    ASSERT_EQ(steps_driver.steps.size(), 5u);
    EXPECT_TRUE(steps_driver.steps[0].first);
    EXPECT_DOUBLE_EQ(steps_driver.steps[0].second, 0.2); // 1/window, before the step
}

TEST_F(Window, GrowsOnlyNearWhatIsInUseAndWithinTheLimit) {
    t.cfg.pos_feedback = {Feedback::Kind::constant, 1};
    // Nothing in flight: no further than initial_destination_concurrency.
    for (int i = 0; i < 20; ++i)
        window_grow(q, drv);
    EXPECT_EQ(q.window, 10);
    EXPECT_EQ(steps_driver.steps.size(), 5u); // no step once it stopped growing
    t.cfg.init_dest_concurrency = 30;
    for (int i = 0; i < 20; ++i)
        window_grow(q, drv);
    EXPECT_EQ(q.window, 20); // the destination concurrency limit
}

TEST_F(Window, AFreshNegativeStepIsDoubleWithTheOvershootGuard) {
    t.cfg.neg_feedback = {Feedback::Kind::constant, 1};
    window_shrink(q, drv);
    EXPECT_EQ(q.window, 3);
    EXPECT_DOUBLE_EQ(q.fail_cohorts, 0.2);
    ASSERT_EQ(steps_driver.steps.size(), 1u);
    EXPECT_FALSE(steps_driver.steps[0].first);
    // Postfix's published pseudocode: one step.
    t.cfg.overshoot_guard = false;
    q.window = 5;
    q.failure = 0;
    window_shrink(q, drv);
    EXPECT_EQ(q.window, 4);
}

TEST_F(Window, AWholeFailedCohortKillsTheQueue) {
    t.cfg.neg_feedback = {Feedback::Kind::constant, 10};
    t.cfg.fail_cohort_limit = 2;
    window_shrink(q, drv);
    EXPECT_EQ(q.window, 1); // never below 1 while live
    window_shrink(q, drv);  // 0.2 + 1: not yet two cohorts
    EXPECT_EQ(q.window, 1);
    window_shrink(q, drv); // 2.2 cohorts
    EXPECT_TRUE(q.dead());
    EXPECT_EQ(steps_driver.steps.size(), 2u); // a dying queue takes no step
}
