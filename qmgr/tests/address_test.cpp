#include "address.hpp"
#include "status_line.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;

TEST(Address, QuotesLocalPartsThatAreNotDotAtoms) {
    EXPECT_EQ(quote_local("alice@example.org"), "alice@example.org");
    EXPECT_EQ(quote_local("john doe@example.org"), "\"john doe\"@example.org");
    EXPECT_EQ(quote_local("a..b@x"), "\"a..b\"@x");
    EXPECT_EQ(quote_local(".a@x"), "\".a\"@x");
    EXPECT_EQ(quote_local("a\"b@x"), "\"a\\\"b\"@x");
    EXPECT_EQ(quote_local("@route:a b@x"), "@route:\"a b\"@x");
    EXPECT_EQ(quote_local(""), "");
    EXPECT_EQ(quote_local("postmaster"), "postmaster");
    EXPECT_EQ(quote_local("jos\xc3\xa9@x"), "jos\xc3\xa9@x"); // 8-bit left alone
}

TEST(Address, UnquoteUndoesQuote) {
    for (const char* a : {"john doe@example.org", "a\"b@x", "plain@x", "a..b@x"})
        EXPECT_EQ(unquote_local(quote_local(a)), a);
}

TEST(Address, VerpSender) {
    EXPECT_EQ(verp_sender("owner-list@example.com", "+=", "", "user@dom.example"),
              "owner-list+user=dom.example@example.com");
    // The original recipient wins when there is one.
    EXPECT_EQ(verp_sender("o@s", "-=", "orig@o.example", "rewritten@r.example"),
              "o-orig=o.example@s");
    EXPECT_EQ(verp_sender("owner", "+=", "", "user"), "owner+user");
}

TEST(Delays, FormatLikePostfix) {
    EXPECT_EQ(format_seconds(0), "0");
    EXPECT_EQ(format_seconds(0.004), "0");
    EXPECT_EQ(format_seconds(0.005), "0.01");
    EXPECT_EQ(format_seconds(0.12), "0.12");
    EXPECT_EQ(format_seconds(0.5), "0.5");
    EXPECT_EQ(format_seconds(1.23), "1.2");
    EXPECT_EQ(format_seconds(1.0), "1");
    EXPECT_EQ(format_seconds(9.96), "10");
    EXPECT_EQ(format_seconds(15.4), "15");
}
