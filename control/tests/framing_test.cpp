#include "cqmgr/control/framing.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::control;
using S = LineFramer::Status;

TEST(LineFramer, SplitsLinesAcrossReads) {
    LineFramer f;
    std::string line;
    f.append("summ");
    EXPECT_EQ(f.next(line), S::need_more);
    f.append("ary\r\nqueues smtp\nje");
    EXPECT_EQ(f.next(line), S::line);
    EXPECT_EQ(line, "summary");
    EXPECT_EQ(f.next(line), S::line);
    EXPECT_EQ(line, "queues smtp");
    EXPECT_EQ(f.next(line), S::need_more);
    EXPECT_EQ(f.pending(), 2u);
    f.append("bs\n\n");
    EXPECT_EQ(f.next(line), S::line);
    EXPECT_EQ(line, "jebs");
    EXPECT_EQ(f.next(line), S::line);
    EXPECT_EQ(line, "");
    EXPECT_EQ(f.next(line), S::need_more);
}

TEST(LineFramer, OnlyOneCarriageReturnGoes) {
    LineFramer f;
    std::string line;
    f.append("a\r\r\n");
    EXPECT_EQ(f.next(line), S::line);
    EXPECT_EQ(line, "a\r");
}

TEST(LineFramer, LimitCountsTheNewline) {
    std::string line;
    LineFramer f;
    f.append(std::string(max_request_bytes - 1, 'a') + "\n");
    EXPECT_EQ(f.next(line), S::line);
    EXPECT_EQ(line.size(), max_request_bytes - 1);

    LineFramer g;
    g.append(std::string(max_request_bytes, 'a') + "\n");
    EXPECT_EQ(g.next(line), S::too_long);
    g.append("summary\n");
    EXPECT_EQ(g.next(line), S::too_long);
}

TEST(LineFramer, TooLongBeforeTheNewlineArrives) {
    std::string line;
    LineFramer f;
    for (int i = 0; i < 3; ++i) {
        f.append(std::string(1000, 'a'));
        EXPECT_EQ(f.next(line), S::need_more);
    }
    f.append(std::string(1096, 'a'));
    EXPECT_EQ(f.next(line), S::too_long);
}

TEST(LineFramer, ManyShortLinesKeepTheBufferSmall) {
    LineFramer f(16);
    std::string line;
    for (int i = 0; i < 1000; ++i) {
        f.append("abc\nde");
        ASSERT_EQ(f.next(line), S::line);
        EXPECT_EQ(line, i == 0 ? "abc" : "deabc");
        ASSERT_EQ(f.next(line), S::need_more);
        ASSERT_EQ(f.pending(), 2u);
    }
}
