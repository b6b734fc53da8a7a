#include "cqmgr/core/feedback.hpp"

#include <gtest/gtest.h>

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
