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

// Addresses with no '@', an empty one, a trailing or leading '@', several,
// and an '@' inside a quoted local part: each split at the last '@'
// (the splitter itself: mail/tests/address_test.cpp).
TEST(Address, EdgeCasesSplitAtTheLastAt) {
    EXPECT_EQ(quote_local("a@"), "a@");
    EXPECT_EQ(quote_local("a b@"), "\"a b\"@");
    EXPECT_EQ(quote_local("@d"), "\"\"@d");
    EXPECT_EQ(quote_local("a@b@c"), "\"a@b\"@c");
    EXPECT_EQ(quote_local("@r:x"), "@r:x");
    EXPECT_EQ(quote_local("@r:a b"), "@r:\"a b\"");
    EXPECT_EQ(unquote_local(""), "");
    EXPECT_EQ(unquote_local("plain"), "plain");
    EXPECT_EQ(unquote_local("a@"), "a@");
    EXPECT_EQ(unquote_local("@d"), "@d");
    EXPECT_EQ(unquote_local("\"a b\"@"), "a b@");
    EXPECT_EQ(unquote_local("\"a@b\"@c"), "a@b@c");
    EXPECT_EQ(verp_sender("o@s", "+=", "", "u@"), "o+u@s");
    EXPECT_EQ(verp_sender("o@", "+=", "", "u@d"), "o+u=d");
    EXPECT_EQ(verp_sender("", "+=", "", "u@d"), "+u=d");
    EXPECT_EQ(verp_sender("o@s", "+=", "", "@d"), "o+=d@s");
    EXPECT_EQ(verp_sender("o@s", "+=", "", "a@b@c"), "o+a@b=c@s");
    EXPECT_EQ(verp_sender("o@s", "", "", "u@d"), "o+u=d@s");
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
