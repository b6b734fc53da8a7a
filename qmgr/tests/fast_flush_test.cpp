#include "cqmgr/protocol/flush_client.hpp"
#include "fast_flush.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::qmgr;
using V = FlushDomains::Verdict;

TEST(FlushDomains, EmptyListMatchesNothing) {
    FlushDomains d("", true);
    EXPECT_EQ(d.match("example.com"), V::no);
}

TEST(FlushDomains, ParentStyleDomainMatchesItselfAndSubdomains) {
    FlushDomains d("Example.COM, other.example", true);
    EXPECT_EQ(d.match("example.com"), V::yes);
    EXPECT_EQ(d.match("mx.EXAMPLE.com"), V::yes);
    EXPECT_EQ(d.match("badexample.com"), V::no);
    EXPECT_EQ(d.match("other.example"), V::yes);
    EXPECT_EQ(d.match("example.org"), V::no);
}

TEST(FlushDomains, DotPatternsOutsideParentStyle) {
    FlushDomains d(".example.com", false);
    EXPECT_EQ(d.match("a.example.com"), V::yes);
    EXPECT_EQ(d.match("example.com"), V::no);
    FlushDomains plain("example.com", false);
    EXPECT_EQ(plain.match("a.example.com"), V::no);
    EXPECT_EQ(plain.match("example.com"), V::yes);
    // Postfix quirk: with parent style, ".example.com" needs a dot before it.
    FlushDomains parent(".example.com", true);
    EXPECT_EQ(parent.match("a.example.com"), V::no);
}

TEST(FlushDomains, FirstHitDecidesAndBangInverts) {
    FlushDomains d("!private.example.com example.com", true);
    EXPECT_EQ(d.match("private.example.com"), V::no);
    EXPECT_EQ(d.match("x.private.example.com"), V::no);
    EXPECT_EQ(d.match("public.example.com"), V::yes);
    FlushDomains twice("!!example.com", true);
    EXPECT_EQ(twice.match("example.com"), V::yes);
}

TEST(FlushDomains, TablesLeaveTheAnswerToTheServer) {
    FlushDomains d("example.com, hash:/etc/postfix/flush, inline:{ a.example=x, b.example=y }",
                   true);
    EXPECT_EQ(d.match("example.com"), V::yes); // decided before the table
    EXPECT_EQ(d.match("a.example"), V::ask);
    ASSERT_EQ(d.tables().size(), 2u);
    EXPECT_EQ(d.tables()[0], "hash:/etc/postfix/flush");
    EXPECT_EQ(d.tables()[1], "inline:{ a.example=x, b.example=y }");
    FlushDomains literal("[127.0.0.1]:25", true); // not a table
    EXPECT_TRUE(literal.tables().empty());
}

TEST(FlushDomains, FilesContributeTheirPatterns) {
    char path[] = "/tmp/fast_flush_testXXXXXX";
    int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    {
        std::ofstream out(path);
        out << "# comment\none.example two.example\n!bad.three.example\nthree.example\n";
    }
    FlushDomains d(std::string("zero.example ") + path, true);
    FlushDomains negated(std::string("!") + path + " example", true);
    std::remove(path);
    EXPECT_EQ(d.match("zero.example"), V::yes);
    EXPECT_EQ(d.match("two.example"), V::yes);
    EXPECT_EQ(d.match("bad.three.example"), V::no);
    EXPECT_EQ(d.match("x.three.example"), V::yes);
    EXPECT_EQ(d.match("comment"), V::no);
    EXPECT_EQ(negated.match("one.example"), V::no);
    EXPECT_EQ(negated.match("bad.three.example"), V::yes); // !! cancels out
    EXPECT_EQ(negated.match("four.example"), V::yes);
}

// A control flush asks the flush service only for a site that
// fast_flush_domains covers; an unreachable service is a failure.
TEST(FlushSendSite, AsksOnlyForCoveredSites) {
    cqmgr::asio::io_context io;
    FlushDomains d("example.com", true);
    cqmgr::qmgr::ServiceSlots slots(io.get_executor(), 1);
    int not_covered = 99, unreachable = 99;
    auto run = [&](const std::string& site, int& status) {
        cqmgr::asio::co_spawn(
            io, flush_send_site(d, slots, "no-such-flush-service", site, std::chrono::seconds(1)),
            [&status](std::exception_ptr, int s) { status = s; });
    };
    run("other.example", not_covered);
    run("example.com", unreachable);
    io.run();
    EXPECT_EQ(not_covered, cqmgr::protocol::flush_stat::deny);
    EXPECT_EQ(unreachable, cqmgr::protocol::flush_stat::fail);
}
