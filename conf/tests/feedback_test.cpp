#include "cqmgr/conf/feedback.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

namespace {
// The feedback at window 4, or -1 when malformed.
double at4(const char* v) {
    auto fb = parse_feedback(v);
    return fb ? fb->at(4) : -1;
}
} // namespace

TEST(Feedback, Constants) {
    EXPECT_DOUBLE_EQ(at4("1"), 1);
    EXPECT_DOUBLE_EQ(at4("0"), 0);
    EXPECT_DOUBLE_EQ(at4("0.5"), 0.5);
    EXPECT_DOUBLE_EQ(at4("1e-1"), 0.1);
    EXPECT_DOUBLE_EQ(at4(" 0.25"), 0.25);
    EXPECT_DOUBLE_EQ(at4("0.5 junk"), 0.5); // text after the number that is not '/' is ignored
}

TEST(Feedback, Ratios) {
    EXPECT_DOUBLE_EQ(at4("1/4"), 0.25);
    EXPECT_DOUBLE_EQ(at4("1 / 4"), 0.25);
    EXPECT_DOUBLE_EQ(at4("1/1e1"), 0.1);
    EXPECT_DOUBLE_EQ(at4("0/5"), 0);
}

TEST(Feedback, PerConcurrency) {
    auto fb = parse_feedback("1/concurrency");
    ASSERT_TRUE(fb);
    EXPECT_TRUE(fb->per_concurrency);
    EXPECT_DOUBLE_EQ(fb->at(4), 0.25);
    EXPECT_DOUBLE_EQ(fb->at(1), 1);
    EXPECT_DOUBLE_EQ(at4("1/Concurrency"), 0.25); // the word is case-insensitive
    EXPECT_DOUBLE_EQ(at4("0.5 / concurrency"), 0.125);
}

TEST(Feedback, MalformedOrUnreasonable) {
    for (const char* bad : {"", "abc", "2", "-1", "nan", "inf", "1/", "1/0", "3/2", "1/2/3", "1/4x",
                            "1/4 ", "2/concurrency", "1/sqrt_concurrency", "1/x", "-1/-2",
                            "1/0.0000000001", "1/concurrencyX"})
        EXPECT_FALSE(parse_feedback(bad)) << bad;
}

TEST(Feedback, SquareRootOnlyWhenAskedFor) {
    EXPECT_FALSE(parse_feedback("1/sqrt_concurrency")); // compiled out in 3.7
    auto fb = parse_feedback("1/sqrt_concurrency", true);
    ASSERT_TRUE(fb);
    EXPECT_TRUE(fb->per_concurrency && fb->sqrt);
    EXPECT_DOUBLE_EQ(fb->at(4), 0.5);
}
