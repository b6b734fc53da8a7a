#include "fields.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::ctl;

TEST(Fields, AbsentNullAndWrongTypesReadAsAbsent) {
    const json j = json::parse(R"({"a":null,"n":3,"s":"x","b":true,"o":{"k":1},"l":[1]})");
    EXPECT_EQ(field(j, "a"), nullptr);
    EXPECT_EQ(field(j, "missing"), nullptr);
    EXPECT_EQ(field(json::array(), "a"), nullptr);
    EXPECT_EQ(string_of(j, "a"), "-");
    EXPECT_EQ(string_of(j, "n"), "3");
    EXPECT_EQ(string_of(j, "s"), "x");
    EXPECT_EQ(string_of(j, "b"), "yes");
    EXPECT_EQ(count_of(j, "s"), "-");
    EXPECT_EQ(count_of(j, "n"), "3");
    EXPECT_FALSE(number_of(j, "s"));
    EXPECT_TRUE(bool_of(j, "b"));
    EXPECT_FALSE(bool_of(j, "n"));
    EXPECT_TRUE(object_of(j, "l").empty());
    EXPECT_TRUE(array_of(j, "o").empty());
    EXPECT_EQ(object_of(j, "o").size(), 1u);
}

TEST(Fields, NumbersWithoutNeedlessDecimals) {
    EXPECT_EQ(number_text(3), "3");
    EXPECT_EQ(number_text(1.0), "1");
    EXPECT_EQ(number_text(0.42), "0.42");
    EXPECT_EQ(number_text(20000), "20000");
}

TEST(Fields, DurationsForHumans) {
    EXPECT_EQ(format_seconds(0.42), "0.42s");
    EXPECT_EQ(format_seconds(3.2), "3.2s");
    EXPECT_EQ(format_seconds(12.3), "12s");
    EXPECT_EQ(format_seconds(303), "5m03s");
    EXPECT_EQ(format_seconds(7500), "2h05m");
    EXPECT_EQ(format_seconds(3 * 86400 + 4 * 3600 + 59), "3d04h");
    EXPECT_EQ(format_seconds(-1), "0s");
}

TEST(Fields, TimesInUtcAndUntil) {
    EXPECT_EQ(format_time(1764000000), "2025-11-24T16:00:00Z");
    const json j = json::parse(R"({"until":1764000600,"none":null})");
    EXPECT_EQ(format_until(j, "until", 1764000000), "2025-11-24T16:10:00Z (in 10m00s)");
    EXPECT_EQ(format_until(j, "until", 1764000600), "2025-11-24T16:10:00Z (ending)");
    EXPECT_EQ(format_until(j, "none", 0), "-");
    EXPECT_EQ(format_until(j, "none", 0, "no end"), "no end");
}

TEST(Fields, Rates) {
    EXPECT_EQ(format_rate(12), "12.0");
    EXPECT_EQ(format_rate(0.26), "0.3");
}
