// Bounded matching in pcre: and regexp: tables (regex_table.hpp): a
// subject is cut at max_subject bytes; a rule whose matching hits PCRE2's
// limit counts as no match (negated or not), is counted and warned about
// at most once a minute; a lookup's budget stops it after a few such hits;
// regexp: patterns run under the same limits (rewritten for PCRE2), the
// few that are not rewritten are named when the table is read.  What a
// pathological subject costs in time is measured by tools/bench
// (hostile-reply), not here: these check the paths that bound it.
#include "regex_table.hpp"
#include "warnings.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;
using cqmgr::qmgr::testing::Warnings;

namespace {

// A subject that makes /^(\w+\s?)*$/ backtrack exponentially: words with
// no space between them, then a character that is neither.
std::string exponential_subject(size_t n) {
    std::string s;
    while (s.size() < n - 1)
        s += "aaaaaaaaa";
    s.resize(n - 1);
    return s + "!";
}

} // namespace

TEST(RegexTable, TheSubjectIsCutAtMaxSubject) {
    for (const char* type : {"pcre", "regexp"}) {
        Warnings w;
        auto t = RegexTable::parse(type, "t", "/marker/ found\n", w.fn());
        std::string before(max_subject - 6, 'x');
        EXPECT_EQ(t.find(before + "marker"), "found") << type;
        EXPECT_EQ(t.find(before + "xmarker"), std::nullopt) << type;
        EXPECT_EQ(t.find(std::string(64 * 1024, 'x') + "marker"), std::nullopt) << type;
        EXPECT_TRUE(w.seen.empty());
    }
}

TEST(RegexTable, ARuleThatHitsTheLimitCountsAsNoMatch) {
    for (const char* type : {"pcre", "regexp"}) {
        Warnings parsing, matching;
        auto t = RegexTable::parse(type, "/etc/postfix/t",
                                   "/^(\\w+\\s?)*$/ slow\n"
                                   "!/^(\\w+\\s?)*$/ negated\n"
                                   "/aaa/ cheap\n",
                                   parsing.fn());
        EXPECT_TRUE(parsing.seen.empty());
        EXPECT_EQ(t.unbounded_rules(), 0u);
        t.warn_on_limit(matching.fn());
        std::string subject = exponential_subject(max_subject);
        EXPECT_EQ(t.find(subject), "cheap") << type;
        EXPECT_EQ(t.limit_hits(), 2u);
        ASSERT_EQ(matching.seen.size(), 2u);
        EXPECT_EQ(matching.seen[0], std::string(type) +
                                        ":/etc/postfix/t, line 1: matching stopped at its limit (a "
                                        "subject made to be slow?): the rule counts as no match");
        EXPECT_NE(matching.seen[1].find(", line 2: "), std::string::npos);
        // Again within the minute: counted, not logged.
        EXPECT_EQ(t.find(subject), "cheap");
        EXPECT_EQ(t.limit_hits(), 4u);
        EXPECT_EQ(matching.seen.size(), 2u);
        // A subject the rules can decide is decided as before.
        EXPECT_EQ(t.find("some words here"), "slow");
    }
}

TEST(RegexTable, ALookupStopsOnceItsBudgetIsSpent) {
    std::string rules;
    for (int i = 0; i < MatchBudget::default_hits + 2; ++i)
        rules += "/^(\\w+\\s?)*$/ slow" + std::to_string(i) + "\n";
    rules += "/a/ cheap\n";
    Warnings w;
    auto t = RegexTable::parse("pcre", "t", rules, w.fn());
    std::string subject = exponential_subject(200);
    EXPECT_EQ(t.find(subject), std::nullopt);
    EXPECT_EQ(t.limit_hits(), static_cast<uint64_t>(MatchBudget::default_hits));
    // A budget shared by several lookups: spent by the first.
    MatchBudget budget;
    EXPECT_EQ(t.find(subject, budget), std::nullopt);
    EXPECT_TRUE(budget.spent());
    EXPECT_EQ(t.find("a!", budget), std::nullopt);
    EXPECT_EQ(t.find("a!"), "cheap");
}

TEST(RegexTable, BackReferencesInRegexpTablesAreBoundedToo) {
    // regexec(3) takes far longer than a millisecond for this pattern on a
    // few hundred bytes; its rewrite for PCRE2 stops at the match limit.
    Warnings w;
    auto t = RegexTable::parse("regexp", "t", "/^(.+)(.+)\\1\\2x$/ slow\n/ab/ cheap\n", w.fn());
    EXPECT_EQ(t.unbounded_rules(), 0u);
    std::string subject;
    while (subject.size() < max_subject - 2)
        subject += "ab";
    subject += "cx";
    EXPECT_EQ(t.find(subject), "cheap");
    EXPECT_EQ(t.limit_hits(), 1u);
    EXPECT_EQ(t.find("abcabcx"), "slow");
}

TEST(RegexTable, PatternsLeftToRegexecAreNamed) {
    Warnings w;
    // Collating elements are not rewritten; nor is POSIX basic syntax (x).
    auto t = RegexTable::parse("regexp", "/etc/postfix/t",
                               "/[[.a.]]b/ one\n/a\\{2\\}/x two\n/ab/ three\n", w.fn());
    EXPECT_EQ(t.size(), 3u);
    EXPECT_EQ(t.unbounded_rules(), 2u);
    ASSERT_EQ(w.seen.size(), 2u);
    EXPECT_EQ(w.seen[0], "regexp:/etc/postfix/t, line 1: pattern /[[.a.]]b/ is matched by "
                         "regexec(3), which has no limit on its work (only the subject is cut at " +
                             std::to_string(max_subject) + " bytes)");
    EXPECT_EQ(t.find("xAB"), "one");
    EXPECT_EQ(t.find("aa"), "two");
    EXPECT_EQ(t.find(std::string(max_subject, 'x') + "ab"), std::nullopt);
}

TEST(RegexTable, RegexpMultiLineFlagIsRegNewline) {
    Warnings w;
    auto t = RegexTable::parse("regexp", "t", "/a.b/m dot\n/^b/m multi\n/^c/ single\n", w.fn());
    EXPECT_EQ(t.unbounded_rules(), 0u);
    EXPECT_EQ(t.find("a\nb"), "multi"); // with REG_NEWLINE '.' is no newline
    EXPECT_EQ(t.find("a\nc"), std::nullopt);
    EXPECT_EQ(t.find("axb"), "dot");
}
