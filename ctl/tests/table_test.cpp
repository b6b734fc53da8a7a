#include "table.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::ctl;

TEST(Table, AlignsColumnsAndTrimsTrailingSpace) {
    Table t({{"NAME"}, {"N", Table::Align::Right}, {"NOTE"}});
    t.add({"example.com", "5", ""});
    t.add({"a", "12345", "long reason text"});
    EXPECT_EQ(t.text(), "NAME             N  NOTE\n"
                        "example.com      5\n"
                        "a            12345  long reason text\n");
}

TEST(Table, MissingCellsAreEmpty) {
    Table t({{"A"}, {"B"}});
    t.add({"x"});
    EXPECT_EQ(t.lines(), (std::vector<std::string>{"A  B", "x"}));
    EXPECT_EQ(t.rows(), 1u);
}

TEST(Table, CountsUtf8CodePointsNotBytes) {
    EXPECT_EQ(display_width("\xc3\xa9t\xc3\xa9"), 3u); // "été"
    Table t({{"NAME"}, {"X"}});
    t.add({"\xc3\xa9t\xc3\xa9", "1"});
    t.add({"abcd", "2"});
    EXPECT_EQ(t.lines()[1], "\xc3\xa9t\xc3\xa9   1");
}

TEST(Table, FitWidthCutsAtCodePoints) {
    EXPECT_EQ(fit_width("abcdef", 3), "abc");
    EXPECT_EQ(fit_width("abc", 10), "abc");
    EXPECT_EQ(fit_width("\xc3\xa9t\xc3\xa9", 2), "\xc3\xa9t");
    EXPECT_EQ(fit_width("abc", 0), "");
}
