// Sender limits' third key: the header class of a message
// (cqmgr_sender_class_header_maps, sender_groups.hpp), looked up in
// cqmgr_sender_limits only when neither the sender address nor its domain
// answered, and its group, apart from every address or domain group.
#include "cqmgr/test/temp_dir.hpp"
#include "fake_driver.hpp"
#include "sender_groups.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;
using cqmgr::core::SenderLimit;
using cqmgr::core::SenderPer;

namespace {

SenderLimit limit(int concurrency) {
    return SenderLimit{concurrency, 0, 0, 0, SenderPer::destination};
}

struct TableDir : cqmgr::test::TempDir {
    TableDir() : TempDir("cqmgr-sender-class") {}
};

// A message's header lines, counting how often they are asked for (each
// time would be a read of the queue file).
struct Headers {
    std::vector<std::string> lines;
    int reads = 0;
    SenderGroups::HeaderLines fn() {
        return [this]() -> const std::vector<std::string>& {
            ++reads;
            return lines;
        };
    }
};

struct SenderClass : ::testing::Test {
    TableDir dir;
    std::vector<std::string> warnings;
    SenderGroups groups;
    void SetUp() override {
        std::string classes =
            dir.write("classes", "/^List-Id:.*<news\\.example\\.com>/ newsletters\n"
                                 "/^Precedence: *bulk/ Bulk-Mail\n"
                                 "/^X-Class: unlisted/ unlisted\n");
        groups = SenderGroups::open(
            {"inline:{ boss@shop.example=concurrency=9, shop.example=concurrency=2, "
             "newsletters=concurrency=1, bulk-mail=concurrency=3, "
             "{ class newsletters = concurrency=7 } }"},
            [this](const std::string& w) { warnings.push_back(w); }, {"regexp:" + classes});
    }
};

TEST_F(SenderClass, AddressThenDomainThenHeaderClass) {
    Headers list{{"From: a@x.example", "List-Id: News <news.example.com>"}};
    // The address answers: the header block is not read.
    auto a = groups.find("boss@shop.example", list.fn());
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->name, "boss@shop.example");
    EXPECT_FALSE(a->header_class);
    // The domain answers: not read either.
    auto d = groups.find("news@shop.example", list.fn());
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->name, "shop.example");
    EXPECT_EQ(d->limit, limit(2));
    EXPECT_EQ(list.reads, 0);
    // Neither: the class its header lines give, looked up as a third key.
    auto c = groups.find("alice@one.example", list.fn());
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->name, "class newsletters");
    EXPECT_TRUE(c->header_class);
    EXPECT_EQ(c->limit, limit(1));
    EXPECT_EQ(list.reads, 1);
    // The null sender has no address or domain, but a header class.
    auto n = groups.find("", list.fn());
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->name, "class newsletters");
    // The class name is lower case, as the envelope's keys are looked up.
    Headers bulk{{"Precedence: bulk"}};
    auto b = groups.find("bob@two.example", bulk.fn());
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->name, "class bulk-mail");
    EXPECT_EQ(b->limit, limit(3));
    // No header lines to ask (the simulator): no class.
    EXPECT_FALSE(groups.find("alice@one.example").has_value());
    EXPECT_TRUE(warnings.empty());
}

TEST_F(SenderClass, NoClassOrAClassWithoutALimitIsNoGroup) {
    Headers none{{"Subject: hello", "List-Id: <other.example.com>"}};
    EXPECT_FALSE(groups.find("alice@one.example", none.fn()).has_value());
    Headers unlisted{{"X-Class: unlisted"}};
    EXPECT_FALSE(groups.find("alice@one.example", unlisted.fn()).has_value());
    EXPECT_EQ(unlisted.reads, 1);
    // Without a header class table, the header block is never read.
    SenderGroups plain = SenderGroups::open({"inline:{ shop.example=concurrency=2 }"}, {});
    Headers list{{"List-Id: News <news.example.com>"}};
    EXPECT_FALSE(plain.find("alice@one.example", list.fn()).has_value());
    EXPECT_EQ(list.reads, 0);
}

TEST_F(SenderClass, GroupsByClassApartFromSenders) {
    cqmgr::core::test::FakeDriver drv;
    cqmgr::core::Scheduler s(
        {}, [](const std::string&) { return cqmgr::core::TransportConfig{}; }, drv);
    drv.sched = &s;
    Headers list{{"List-Id: News <news.example.com>"}};
    // Two senders' mail with one List-Id is one group.
    EXPECT_EQ(groups.group("alice@one.example", s, list.fn()), 1);
    EXPECT_EQ(groups.group("bob@two.example", s, list.fn()), 1);
    EXPECT_EQ(groups.group("carol@shop.example", s, list.fn()), 2);
    // A sender whose address is the group's name (no domain) has a group
    // of its own, with its own limit.
    EXPECT_EQ(groups.group("class newsletters", s, list.fn()), 3);
    EXPECT_EQ(groups.group("dave@three.example", s, list.fn()), 1);
    EXPECT_EQ(groups.group("dave@three.example", s), 0);
    EXPECT_EQ(groups.groups(), 3u);
    EXPECT_EQ(groups.name_of(1), "class newsletters");
    EXPECT_EQ(groups.name_of(2), "shop.example");
    EXPECT_EQ(groups.name_of(3), "class newsletters");
}

TEST(SenderClassName, OneBoundedPrintableWord) {
    std::string why;
    EXPECT_EQ(SenderGroups::class_name(" News-Letters\t", why), "news-letters");
    const std::string longest(SenderGroups::max_class, 'x');
    EXPECT_EQ(SenderGroups::class_name(longest, why), longest);
    for (const std::string& bad :
         std::vector<std::string>{"", "  ", "two words", longest + "x", "a\x01", "caf\xc3\xa9"}) {
        why.clear();
        EXPECT_FALSE(SenderGroups::class_name(bad, why).has_value()) << bad;
        EXPECT_EQ(why, "bad class name \"" + bad +
                           "\": expected one word of at most 64 printable characters");
    }
}

// Sender groups whose class tables are one pcre: table of `rules` and
// whose limits are `limits`, with the warnings they give.
struct PcreClasses {
    TableDir dir;
    std::string table;
    std::vector<std::string> warnings;
    SenderGroups groups;
    PcreClasses(const std::string& rules, const std::string& limits)
        : table(dir.write("classes", rules)),
          groups(SenderGroups::open({limits},
                                    [this](const std::string& w) { warnings.push_back(w); },
                                    {"pcre:" + table})) {}
};

TEST(SenderClassTables, ABadClassIsWarnedAboutAndTheNextLineAsked) {
    PcreClasses c("/^Precedence: *bulk/ bulk mail\n/^X-Class: (.*)/ campaigns\n",
                  "inline:{ campaigns=concurrency=4 }");
    Headers h{{"Precedence: bulk", "X-Class: any"}};
    auto f = c.groups.find("a@b.example", h.fn());
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->name, "class campaigns");
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_EQ(c.warnings[0], "cqmgr_sender_class_header_maps: Precedence: bulk: bad class name "
                             "\"bulk mail\": expected one word of at most 64 printable characters");
}

TEST(SenderClassTables, HeaderLinesMatchBoundedly) {
    // A header block made to defeat a backtracking rule: the block's
    // budget is spent after a few lines and the rest are not matched.
    PcreClasses c("/^Subject: (\\w+\\s?)*$/ slow\n/^Precedence: *bulk/ bulk\n",
                  "inline:{ bulk=concurrency=1, slow=concurrency=1 }");
    std::string slow = "Subject: " + std::string(400, 'a') + "!";
    Headers h{std::vector<std::string>(64 * 1024 / slow.size(), slow)};
    h.lines.push_back("Precedence: bulk");
    EXPECT_FALSE(c.groups.find("a@b.example", h.fn()).has_value());
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_EQ(c.warnings[0].rfind("cqmgr_sender_class_header_maps: pcre:" + c.table +
                                      ", line 1: matching stopped at its limit",
                                  0),
              0u)
        << c.warnings[0];
}

} // namespace
