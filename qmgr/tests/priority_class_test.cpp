// Priority lanes: a message's class from the administrator's tables
// (priority_class.hpp).  Each table type's matches are compared with what
// the installed postmap(1) answers for the same table and key.
#include "cqmgr/test/temp_dir.hpp"
#include "priority_class.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using cqmgr::core::Lane;
using cqmgr::qmgr::PriorityTables;

namespace {

// A temporary directory with an empty main.cf (postmap -c) and the tables.
struct TableDir : cqmgr::test::TempDir {
    TableDir() : TempDir("cqmgr-priority") { write("main.cf", ""); }
};

// What `cmd` prints on standard output, if it exits with status 0.
std::optional<std::string> capture(const std::string& cmd) {
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return std::nullopt;
    std::string out;
    std::array<char, 256> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), p))
        out.append(buf.data(), n);
    if (::pclose(p) != 0) return std::nullopt;
    return out;
}

// What `postmap -q key table` prints (without the newline), or nothing.
std::optional<std::string> postmap(const TableDir& dir, const std::string& key,
                                   const std::string& table) {
    auto out = capture("/usr/sbin/postmap -c '" + dir.str() + "' -q '" + key + "' '" + table +
                       "' 2>/dev/null");
    if (out && !out->empty() && out->back() == '\n') out->pop_back();
    return out;
}

const std::vector<std::string> keys = {"alice@example.com",
                                       "ALICE@Example.COM",
                                       "example.com",
                                       "shop.example",
                                       "x.example.org",
                                       "alerts@bank.test",
                                       "otp@bank.test",
                                       "bank.test",
                                       "other.net",
                                       "Subject: Your code",
                                       "X-Priority: 1 (Highest)",
                                       "Subject: our newsletter, March"};

// Compares our answer with postmap's for every key of `keys`.
void same_as_postmap(const TableDir& dir, const std::string& table) {
    PriorityTables t = PriorityTables::open({table}, {}, {});
    for (const auto& key : keys)
        EXPECT_EQ(t.answer(key), postmap(dir, key, table)) << table << " key " << key;
}

// True when postmap is installed and supports table `type` (postconf -m).
bool have_postmap(const TableDir& dir, const std::string& type) {
    if (::access("/usr/sbin/postmap", X_OK) != 0) return false;
    auto types = capture("/usr/sbin/postconf -c '" + dir.str() + "' -m 2>/dev/null");
    return types && types->find(type + "\n") != std::string::npos;
}

// Compares table `type`:`body` with postmap for every key; with `file`,
// `body` is the text of a file of that name and the table names the file.
// Skipped where postmap lacks the type.
void compare_with_postmap(const std::string& type, const std::string& body, bool file) {
    TableDir dir;
    if (!have_postmap(dir, type)) GTEST_SKIP() << "postmap without " << type << " tables";
    same_as_postmap(dir, type + ":" + (file ? dir.write(type + ".table", body) : body));
}

TEST(PriorityTables, TexthashMatchesPostmap) {
    compare_with_postmap("texthash",
                         "# who is urgent\n"
                         "alice@example.com urgent\n"
                         "example.com   normal\n"
                         "shop.example\n"
                         "  bulk\n"
                         "bank.test urgent\n",
                         true);
}

TEST(PriorityTables, InlineMatchesPostmap) {
    compare_with_postmap("inline",
                         "{ example.com=urgent, { shop.example = bulk }, alerts@bank.test=urgent }",
                         false);
}

TEST(PriorityTables, RegexpMatchesPostmap) {
    compare_with_postmap("regexp",
                         "/^alerts@/ urgent\n"
                         "/\\.example\\.org$/ bulk\n"
                         "/^X-Priority: 1/ urgent\n"
                         "!/\\.(com|test)$/ normal\n",
                         true);
}

TEST(PriorityTables, PcreMatchesPostmap) {
    compare_with_postmap("pcre",
                         "/^otp@/ urgent\n"
                         "/^Subject: .*newsletter/ bulk\n"
                         "/^Subject: Your (code|password)/i URGENT\n"
                         "/^[a-z]+@example\\.com$/ urgent\n",
                         true);
}

TEST(PriorityTables, SenderThenItsDomainThenEachRecipientDomain) {
    PriorityTables t = PriorityTables::open(
        {"inline:{ ceo@corp.example=urgent, corp.example=bulk, bank.test=urgent, "
         "news.example=bulk }"},
        {}, {});
    EXPECT_EQ(t.classify("ceo@corp.example", {"news.example"}), Lane::urgent);
    EXPECT_EQ(t.classify("staff@corp.example", {"bank.test"}), Lane::bulk);
    EXPECT_EQ(t.classify("x@else.example", {"other.example", "bank.test"}), Lane::urgent);
    EXPECT_EQ(t.classify("", {"news.example"}), Lane::bulk); // the null sender
    EXPECT_EQ(t.classify("x@else.example", {"other.example"}), std::nullopt);
}

TEST(PriorityTables, TheFirstTableWithAValidAnswerWins) {
    std::vector<std::string> warnings;
    PriorityTables t = PriorityTables::open({"inline:{ a.example=soon }", "static:bulk"}, {},
                                            [&](const std::string& w) { warnings.push_back(w); });
    // The first key already: a.example's "soon" is skipped, static: answers.
    EXPECT_EQ(t.classify("", {"a.example"}), Lane::bulk);
    ASSERT_FALSE(warnings.empty());
    EXPECT_NE(warnings[0].find("unknown class \"soon\""), std::string::npos) << warnings[0];
}

TEST(PriorityTables, HeaderLinesAsHeaderChecksSeesThem) {
    TableDir dir;
    std::string t = dir.write("headers", "/^X-Priority: *1/ urgent\n"
                                         "/^Precedence: *bulk/ bulk\n");
    PriorityTables p = PriorityTables::open({}, {"regexp:" + t}, {});
    EXPECT_TRUE(p.wants_headers());
    EXPECT_EQ(p.classify("a@b.example", {"c.example"}), std::nullopt);
    EXPECT_EQ(p.classify_headers({"From: a@b.example", "Precedence: bulk", "X-Priority: 1"}),
              Lane::bulk);
    EXPECT_EQ(p.classify_headers({"Subject: hello\n\tX-Priority: 1"}), std::nullopt);
}

TEST(PriorityTables, HeaderLinesMatchBoundedly) {
    // A sender's header block made to defeat a backtracking rule: 64 KiB of
    // lines that hit the match limit, then the line that would classify.
    for (const char* type : {"pcre", "regexp"}) {
        TableDir dir;
        std::string t = dir.write("headers", "/^Subject: (\\w+\\s?)*$/ urgent\n"
                                             "/^Precedence: *bulk/ bulk\n");
        std::vector<std::string> warnings;
        PriorityTables p =
            PriorityTables::open({}, {std::string(type) + ":" + t},
                                 [&](const std::string& w) { warnings.push_back(w); });
        std::string slow = "Subject: " + std::string(400, 'a') + "!";
        std::vector<std::string> lines(64 * 1024 / slow.size(), slow);
        lines.push_back("Precedence: bulk");
        // The block's budget is spent after a few lines: the rest are not
        // matched, and the message stays in the normal lane.
        EXPECT_EQ(p.classify_headers(lines), std::nullopt) << type;
        EXPECT_EQ(p.limit_hits(), static_cast<uint64_t>(cqmgr::qmgr::MatchBudget::default_hits));
        ASSERT_EQ(warnings.size(), 1u) << type;
        EXPECT_EQ(warnings[0].rfind("cqmgr_priority_header_maps: " + std::string(type) + ":" + t +
                                        ", line 1: matching stopped at its limit",
                                    0),
                  0u)
            << warnings[0];
        // A line is matched on its first bytes only.
        EXPECT_EQ(p.classify_headers({"X-Filler: " + std::string(cqmgr::qmgr::max_subject, 'x') +
                                          "\n\tPrecedence: bulk",
                                      "Precedence: bulk"}),
                  Lane::bulk);
        EXPECT_EQ(p.classify_headers(
                      {"Precedence:" + std::string(cqmgr::qmgr::max_subject, ' ') + "bulk"}),
                  std::nullopt);
    }
}

TEST(PriorityTables, Parse) {
    EXPECT_EQ(PriorityTables::parse(" Urgent "), Lane::urgent);
    EXPECT_EQ(PriorityTables::parse("NORMAL"), Lane::normal);
    EXPECT_EQ(PriorityTables::parse("bulk"), Lane::bulk);
    EXPECT_EQ(PriorityTables::parse("OK"), std::nullopt);
    EXPECT_TRUE(PriorityTables().empty());
}

} // namespace
