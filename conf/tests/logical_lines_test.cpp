#include "cqmgr/conf/logical_lines.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::conf;

namespace {
std::vector<LogicalLine> read(std::string_view text, std::vector<std::string>* warnings = nullptr) {
    return read_logical_lines(text, "main.cf", [&](const std::string& w) {
        if (warnings) warnings->push_back(w);
    });
}
} // namespace

TEST(LogicalLines, ContinuationTextIsAppendedAsIs) {
    auto l = read("a = x,\n    y\n\tz\nb = 2\n");
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].text, "a = x,    y\tz");
    EXPECT_EQ(l[0].line, 1);
    EXPECT_EQ(l[1].text, "b = 2");
    EXPECT_EQ(l[1].line, 4);
}

TEST(LogicalLines, CommentsAndBlankLinesDoNotEndALogicalLine) {
    auto l = read("a = 1\n# comment\n   # indented comment\n\n \t \n  b\nc = 3");
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].text, "a = 1  b");
    EXPECT_EQ(l[1].text, "c = 3");
    EXPECT_EQ(l[1].line, 7);
}

TEST(LogicalLines, LeadingWhiteSpaceWithoutALineToContinueIsSkipped) {
    std::vector<std::string> w;
    auto l = read("# header\n  orphan = 1\n   more\nreal = 2\n", &w);
    ASSERT_EQ(l.size(), 1u);
    EXPECT_EQ(l[0].text, "real = 2");
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(
        w[0],
        "main.cf, line 2: logical line must not start with whitespace: \"  orphan = 1   more\"");
}

TEST(LogicalLines, LongSkippedLineIsShortenedInTheWarning) {
    std::vector<std::string> w;
    read(" 0123456789012345678901234567890123456789\n", &w);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("\" 01234567890123456789012345678...\""), std::string::npos) << w[0];
}

TEST(LogicalLines, CarriageReturnsAreKeptAndLastLineNeedsNoNewline) {
    auto l = read("a = 1\r\n  b\r\nc = 2");
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].text, "a = 1\r  b\r");
    EXPECT_EQ(l[1].text, "c = 2");
}

TEST(LogicalLines, EmptyInput) {
    EXPECT_TRUE(read("").empty());
    EXPECT_TRUE(read("\n\n# only comments\n").empty());
}
