// Reply classification: the default rules against receivers' real texts,
// the admin's pcre: and regexp: tables (first match wins, before the
// defaults), and what a bad table line costs (a warning, that line).
#include "reply_class.hpp"
#include "warnings.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::qmgr;
using cqmgr::qmgr::testing::Warnings;

namespace {

ReplyClass classify(const std::string& status, const std::string& text) {
    static const ReplyClassifier c;
    return c.classify(status, text);
}

} // namespace

TEST(ReplyClass, DefaultRulesKnowTheCommonReceivers) {
    using C = ReplyClass;
    struct Case {
        const char* status;
        const char* text;
        ReplyClass want;
    };
    const Case cases[] = {
        // Postfix anvil at the greeting, as the SMTP client reports it to qmgr.
        {"4.7.0",
         "host mx.example[192.0.2.1] refused to talk to me: 421 4.7.0 Error: too many connections "
         "from 127.0.0.1",
         C::connection_limit},
        {"4.7.0", "host mx.example[192.0.2.1] said: 450 4.7.1 Error: too much mail from 192.0.2.9",
         C::rate_limit},
        {"4.7.1",
         "host mx.example[192.0.2.1] said: 450 4.7.1 Error: too many recipients from "
         "192.0.2.9 (in reply to RCPT TO command)",
         C::rate_limit},
        {"4.5.3",
         "host mx.example[192.0.2.1] said: 452 4.5.3 Error: too many recipients (in reply "
         "to RCPT TO command)",
         C::other},
        // Gmail.
        {"4.7.28",
         "host gmail-smtp-in.l.google.com[142.250.1.1] said: 421-4.7.28 Our system has detected an "
         "unusual rate of unsolicited mail originating from your IP address.",
         C::rate_limit},
        {"4.7.0",
         "host gmail-smtp-in.l.google.com[142.250.1.1] said: 421 4.7.0 Your IP has been "
         "rate limited",
         C::rate_limit},
        // Microsoft.
        {"4.7.500",
         "host x.mail.protection.outlook.com[52.1.1.1] said: 451 4.7.500 Server busy. "
         "Please try again later from [192.0.2.9]. (S77719)",
         C::rate_limit},
        {"4.3.2",
         "host x.mail.protection.outlook.com[52.1.1.1] refused to talk to me: 421 4.3.2 The "
         "maximum number of concurrent server connections has exceeded a limit, closing "
         "transmission channel",
         C::connection_limit},
        {"4.7.0", "host x[52.1.1.1] refused to talk to me: 421 4.7.0 Too many connections",
         C::connection_limit},
        // Yahoo.
        {"4.7.0",
         "host mta5.am0.yahoodns.net[67.195.204.1] refused to talk to me: 421 4.7.0 "
         "[TSS04] Messages from 192.0.2.9 temporarily deferred due to unexpected volume or "
         "user complaints",
         C::rate_limit},
        // Greylisting.
        {"4.2.0",
         "host mx[192.0.2.1] said: 450 4.2.0 <bob@example.com>: Recipient address "
         "rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.com.html",
         C::greylist},
        {"4.7.1",
         "host mx[192.0.2.1] said: 451 4.7.1 Please try again later (in reply to RCPT TO "
         "command)",
         C::greylist},
        // Neither.
        {"5.1.1", "host mx[192.0.2.1] said: 550 5.1.1 <bob@example.com>: User unknown", C::hard},
        {"4.4.1", "connect to mx[192.0.2.1]:25: Connection refused", C::other},
        // Timeouts and dropped sessions (destination shares).
        {"4.4.2",
         "conversation with mx[192.0.2.1] timed out while receiving the initial server "
         "greeting",
         C::timeout},
        {"4.4.2", "lost connection with mx[192.0.2.1] while receiving the initial server greeting",
         C::timeout},
        {"4.4.1", "connect to mx[192.0.2.1]:25: Connection timed out", C::timeout},
        {"4.2.2", "host mx[192.0.2.1] said: 452 4.2.2 Mailbox full", C::other},
    };
    for (const Case& c : cases)
        EXPECT_EQ(classify(c.status, c.text), c.want) << c.text;
}

TEST(ReplyClass, Names) {
    for (ReplyClass c : {ReplyClass::connection_limit, ReplyClass::rate_limit, ReplyClass::greylist,
                         ReplyClass::timeout, ReplyClass::hard, ReplyClass::other})
        EXPECT_EQ(reply_class_from_name(reply_class_name(c)), c);
    EXPECT_EQ(reply_class_from_name("Connection-Limit"), ReplyClass::connection_limit);
    EXPECT_EQ(reply_class_from_name("slow"), std::nullopt);
}

TEST(ReplyClass, AdminRulesComeFirstAndSeeTheStatus) {
    Warnings w;
    auto table = RegexTable::parse("pcre", "rules",
                                   "# ours\n"
                                   "/^4\\.7\\.0 .*too many connections/ rate_limit\n"
                                   "/slow down,\n"
                                   "   please/ RATE-LIMIT\n"
                                   "!/mx\\.example/ other\n"
                                   "/Mx\\.Example.*sleepy/ connection_limit\n"
                                   "/x/  bogus\n",
                                   w.fn());
    EXPECT_EQ(table.size(), 5u);
    EXPECT_TRUE(w.seen.empty());
    ReplyClassifier c(std::move(table), w.fn());
    // The admin's first rule overrides the default one.
    EXPECT_EQ(c.classify("4.7.0", "host mx.example[1.2.3.4] refused to talk to me: 421 4.7.0 "
                                  "Error: too many connections from 1.2.3.4"),
              ReplyClass::rate_limit);
    // A continued line; case-insensitive by default.
    EXPECT_EQ(c.classify("4.0.0", "host mx.example said: 421 slow down, please"),
              ReplyClass::rate_limit);
    // A negated rule.
    EXPECT_EQ(c.classify("4.0.0", "host other.example said: 421 too many connections"),
              ReplyClass::other);
    EXPECT_EQ(c.classify("4.0.0", "host mx.example said: 421 sleepy"),
              ReplyClass::connection_limit);
    // An unknown class falls through to the defaults, with a warning.
    EXPECT_EQ(c.classify("5.0.0", "host mx.example said: 550 x"), ReplyClass::hard);
    ASSERT_EQ(w.seen.size(), 1u);
    EXPECT_NE(w.seen[0].find("unknown class \"bogus\""), std::string::npos);
}

TEST(ReplyClass, RegexpTablesAndBadLines) {
    Warnings w;
    auto table = RegexTable::parse("regexp", "/etc/postfix/rules",
                                   "/too (busy|tired)/ connection_limit\n"
                                   "/unclosed connection_limit\n"
                                   "/(/ rate_limit\n"
                                   "if /x/\n"
                                   "/y/ $1\n"
                                   "/z/q other\n"
                                   "/CaSe/i greylist\n",
                                   w.fn());
    EXPECT_EQ(table.size(), 2u);
    ASSERT_EQ(w.seen.size(), 5u);
    EXPECT_EQ(w.seen[0].rfind("regexp:/etc/postfix/rules, line 2: missing closing delimiter", 0),
              0u)
        << w.seen[0];
    EXPECT_EQ(table.find("421 TOO BUSY"), "connection_limit");
    // i toggles: this rule is case-sensitive.
    EXPECT_EQ(table.find("case"), std::nullopt);
    EXPECT_EQ(table.find("CaSe"), "greylist");
}

TEST(ReplyClass, OpenReadsAFileAndRefusesOtherTypes) {
    Warnings w;
    char path[] = "/tmp/reply_rules_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    std::ofstream(path) << "/sleepy/ connection_limit\n";
    auto t = RegexTable::open(std::string("pcre:") + path, w.fn());
    ASSERT_TRUE(t);
    EXPECT_EQ(t->find("x sleepy"), "connection_limit");
    EXPECT_FALSE(RegexTable::open(std::string("hash:") + path, w.fn()));
    EXPECT_FALSE(RegexTable::open("pcre:/nonexistent/rules", w.fn()));
    EXPECT_EQ(w.seen.size(), 2u);
    std::remove(path);
}

// A receiver's text made to defeat the default greylist rule
// (/\b4\.[27]\.[01]\b.*(try|...).* later/): "4.2.0 try" over and over,
// never "later".
std::string crafted_reply(size_t n) {
    std::string text = "host mx[192.0.2.1] said: 450 4.2.0 ";
    while (text.size() < n)
        text += "4.2.0 try ";
    return text;
}

TEST(ReplyClass, TheRulesSeeTheFirstBytesOnly) {
    ReplyClassifier c;
    // The words of a class past the cut are not seen.
    std::string filler(max_subject, 'x');
    EXPECT_EQ(c.classify("4.7.0", "421 4.7.0 too many connections " + filler),
              ReplyClass::connection_limit);
    EXPECT_EQ(c.classify("4.7.0", "421 4.7.0 " + filler + " too many connections"),
              ReplyClass::other);
    // A crafted text of 2 KB or 64 KB is decided on its first bytes, and
    // the default rules hit no limit there.
    EXPECT_EQ(c.classify("4.2.0", crafted_reply(2048)), ReplyClass::other);
    EXPECT_EQ(c.classify("4.2.0", crafted_reply(64 * 1024)), ReplyClass::other);
    EXPECT_EQ(c.limit_hits(), 0u);
}

TEST(ReplyClass, AnAdminRuleThatHitsItsLimitIsNoMatch) {
    Warnings w;
    auto table = RegexTable::parse("pcre", "/etc/postfix/reply_rules",
                                   "/^4\\.2\\.0 host mx said: 450 4\\.2\\.0 (\\w+\\s?)*$/ "
                                   "rate_limit\n"
                                   "/4\\.2\\.0 try/ connection_limit\n",
                                   w.fn());
    ReplyClassifier c(std::move(table), w.fn());
    // Words without a space between them, then one character that is not
    // a word's: the first rule backtracks exponentially, stops at its
    // limit and counts as no match; the next rule decides.
    std::string text = "host mx said: 450 4.2.0 " + std::string(300, 'a') + "!";
    EXPECT_EQ(c.classify("4.2.0", text), ReplyClass::other);
    EXPECT_EQ(c.limit_hits(), 1u);
    ASSERT_EQ(w.seen.size(), 1u);
    EXPECT_EQ(w.seen[0].rfind("cqmgr_adaptive_reply_rules: pcre:/etc/postfix/reply_rules, line 1: "
                              "matching stopped at its "
                              "limit",
                              0),
              0u)
        << w.seen[0];
    EXPECT_EQ(c.classify("4.2.0", "host mx said: 450 4.2.0 try " + std::string(300, 'a') + "!"),
              ReplyClass::connection_limit);
    EXPECT_EQ(c.limit_hits(), 2u);
    EXPECT_EQ(c.classify("4.2.0", "host mx said: 450 4.2.0 aaa aaa"), ReplyClass::rate_limit);
}

TEST(ReplyClass, ATextSeenLatelyIsNotMatchedAgain) {
    ReplyClassifier c;
    for (int i = 0; i < 5; ++i)
        EXPECT_EQ(c.classify("4.2.0", crafted_reply(2048)), ReplyClass::other);
    EXPECT_EQ(c.matched(), 1u);
    // Texts that differ only past the cut are the same text to the rules.
    EXPECT_EQ(c.classify("4.2.0", crafted_reply(2048) + "later"), ReplyClass::other);
    EXPECT_EQ(c.matched(), 1u);
    EXPECT_EQ(c.classify("4.7.1", "451 4.7.1 Please try again later"), ReplyClass::greylist);
    EXPECT_EQ(c.classify("4.7.1", "451 4.7.1 Please try again later"), ReplyClass::greylist);
    EXPECT_EQ(c.matched(), 2u);
}

TEST(ReplyClass, ASpentBudgetMatchesNoRule) {
    ReplyClassifier c;
    MatchBudget spent;
    spent.hits_left = 0;
    EXPECT_EQ(c.classify("4.7.0", "421 4.7.0 too many connections", spent), ReplyClass::other);
    EXPECT_EQ(c.classify("5.7.0", "550 5.7.0 too many connections", spent), ReplyClass::hard);
    EXPECT_EQ(c.matched(), 0u);
    // Nothing was kept: with a budget the rules decide.
    EXPECT_EQ(c.classify("4.7.0", "421 4.7.0 too many connections"), ReplyClass::connection_limit);
}
