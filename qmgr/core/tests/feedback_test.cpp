#include "cqmgr/core/feedback.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;

TEST(Feedback, ParsesPostfixForms) {
    auto c = parse_feedback("1", false);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->kind, Feedback::Kind::constant);
    EXPECT_DOUBLE_EQ(c->value(7), 1.0);
    auto r = parse_feedback("1/8", false);
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->value(3), 0.125);
    auto w = parse_feedback("1 / concurrency", false);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->kind, Feedback::Kind::per_window);
    EXPECT_DOUBLE_EQ(w->value(4), 0.25);
    EXPECT_FALSE(parse_feedback("1/sqrt_concurrency", false)); // compiled out in 3.7
    auto s = parse_feedback("1/sqrt_concurrency", true);
    ASSERT_TRUE(s);
    EXPECT_DOUBLE_EQ(s->value(4), 0.5);
}

TEST(Feedback, RejectsBadValues) {
    EXPECT_FALSE(parse_feedback("2", false));      // outside [0, 1]
    EXPECT_FALSE(parse_feedback("x", false));
    EXPECT_FALSE(parse_feedback("1/0", false));
    EXPECT_FALSE(parse_feedback("1/2 extra", false));
    EXPECT_FALSE(parse_feedback("-1/2", false));
}
