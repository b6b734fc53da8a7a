#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/lookup_table.hpp"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>

using namespace cqmgr::conf;

TEST(LookupTables, TexthashInlineStaticFirstMatchWins) {
    char path[] = "/tmp/cqmgr-table-XXXXXX";
    int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    {
        std::ofstream out(path);
        out << "# rates\n"
               "Example.COM   50/s,\n"
               "   10\n"
               "\n"
               "smtp          3000/min\n"
               "example.com   1/s\n";
    }
    auto t = LookupTables::open({"inline:{ a.example=2, { b.example = 5/s, 3 } }",
                                 std::string("texthash:") + path, "static:7"});
    EXPECT_EQ(t.find("a.example"), "2");
    EXPECT_EQ(t.find("B.example"), "5/s, 3");
    EXPECT_EQ(t.find("example.com"), "50/s, 10"); // continued, first of duplicates
    EXPECT_EQ(t.find("smtp"), "3000/min");
    EXPECT_EQ(t.find("anything"), "7");
    ::unlink(path);
    ::close(fd);
}

TEST(LookupTables, EmptyAndErrors) {
    auto none = LookupTables::open({});
    EXPECT_TRUE(none.empty());
    EXPECT_FALSE(none.find("x"));
    EXPECT_THROW(LookupTables::open({"hash:/etc/postfix/nothing"}), ConfigError);
    EXPECT_THROW(LookupTables::open({"texthash:/nonexistent/file"}), ConfigError);
    EXPECT_THROW(LookupTables::open({"inline:{a}"}), ConfigError);
    EXPECT_THROW(LookupTables::open({"nocolon"}), ConfigError);
}
