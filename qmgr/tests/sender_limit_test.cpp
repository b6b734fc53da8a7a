// Sender limits: the values of cqmgr_sender_limits (sender_limit.hpp) and
// a message's group from the tables (sender_groups.hpp), given to a real
// scheduler core.
#include "cqmgr/test/temp_dir.hpp"
#include "fake_driver.hpp"
#include "sender_groups.hpp"
#include "sender_limit.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;
using cqmgr::core::SenderLimit;
using cqmgr::core::SenderPer;
using Kind = SenderLimitError::Kind;

namespace {

SenderLimit limit(int concurrency, int64_t count = 0, int64_t period_ms = 0, int64_t burst = 0,
                  SenderPer per = SenderPer::destination) {
    return SenderLimit{concurrency, count, period_ms, burst, per};
}

TEST(SenderLimitParse, TheForms) {
    EXPECT_EQ(parse_sender_limit("concurrency=2 per destination"), limit(2));
    EXPECT_EQ(parse_sender_limit("concurrency=2"), limit(2));
    EXPECT_EQ(parse_sender_limit("rate=100/min per provider"),
              limit(0, 100, 60'000, 100, SenderPer::provider));
    EXPECT_EQ(parse_sender_limit("  per Destination\trate=10/s,20  CONCURRENCY=5 "),
              limit(5, 10, 1000, 20));
    EXPECT_EQ(parse_sender_limit("concurrency=1 rate=3/2h,1 per provider"),
              limit(1, 3, 7'200'000, 1, SenderPer::provider));
}

TEST(SenderLimitParse, BadValuesSayWhy) {
    struct Case {
        const char* value;
        Kind kind;
        const char* message;
    };
    const Case cases[] = {
        {"", Kind::nothing, "no concurrency= or rate="},
        {"per destination", Kind::nothing, "no concurrency= or rate="},
        {"concurrency=2 fast", Kind::word, "unknown word \"fast\""},
        {"concurrency=0", Kind::concurrency, "\"concurrency=0\": expected a count of 1 to 1000000"},
        {"concurrency=", Kind::concurrency, "\"concurrency=\": expected a count of 1 to 1000000"},
        {"concurrency=2 concurrency=3", Kind::duplicate, "\"concurrency=3\" given twice"},
        {"rate=5/fortnight", Kind::rate, "rate \"5/fortnight\": unknown period unit"},
        {"rate=5", Kind::rate, "rate \"5\": expected N/period[,burst]"},
        {"concurrency=2 per", Kind::scope, "\"per \": expected per destination or per provider"},
        {"concurrency=2 per sender", Kind::scope,
         "\"per sender\": expected per destination or per provider"},
        {"concurrency=2 per destination per provider", Kind::duplicate, "\"per\" given twice"},
        // Its milliseconds would overflow.
        {"rate=1/1000000000000d", Kind::rate, "rate \"1/1000000000000d\": bad period"},
    };
    for (const Case& c : cases) {
        auto r = parse_sender_limit(c.value);
        ASSERT_FALSE(r.ok()) << c.value;
        EXPECT_EQ(r.error().kind, c.kind) << c.value;
        EXPECT_EQ(r.error().message(), c.message) << c.value;
    }
}

TEST(SenderLimitParse, TextReadsBackAsTheSameLimit) {
    for (const char* v : {"concurrency=2", "rate=100/min,5 per provider",
                          "concurrency=7 rate=1/3h per destination"}) {
        auto r = parse_sender_limit(v);
        ASSERT_TRUE(r.ok()) << v;
        EXPECT_EQ(parse_sender_limit(sender_limit_text(*r)), *r) << v;
    }
    EXPECT_EQ(sender_limit_text(limit(2)), "concurrency=2 per destination");
}

struct TableDir : cqmgr::test::TempDir {
    TableDir() : TempDir("cqmgr-senders") {}
};

TEST(SenderGroups, AddressThenDomainEachItsOwnGroup) {
    std::vector<std::string> warnings;
    SenderGroups groups = SenderGroups::open(
        {"inline:{ boss@campaign.example=concurrency=9, campaign.example=concurrency=2, "
         "{ broken.example = concurrency=none } }"},
        [&](const std::string& w) { warnings.push_back(w); });
    ASSERT_FALSE(groups.empty());
    auto boss = groups.find("Boss@Campaign.example");
    ASSERT_TRUE(boss.has_value());
    EXPECT_EQ(boss->name, "boss@campaign.example");
    EXPECT_EQ(boss->limit, limit(9));
    auto other = groups.find("news@campaign.example");
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(other->name, "campaign.example");
    EXPECT_EQ(other->limit, limit(2));
    EXPECT_FALSE(groups.find("").has_value());
    EXPECT_FALSE(groups.find("a@trickle.example").has_value());
    // A bad value is warned about and is no answer.
    EXPECT_FALSE(groups.find("x@broken.example").has_value());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], "cqmgr_sender_limits: broken.example: bad value \"concurrency=none\": "
                           "\"concurrency=none\": expected a count of 1 to 1000000");

    // Numbers for the scheduler: one per group, its limit given once.
    cqmgr::core::test::FakeDriver drv;
    cqmgr::core::Scheduler s(
        {}, [](const std::string&) { return cqmgr::core::TransportConfig{}; }, drv);
    drv.sched = &s;
    EXPECT_EQ(groups.group("a@campaign.example", s), 1);
    EXPECT_EQ(groups.group("boss@campaign.example", s), 2);
    EXPECT_EQ(groups.group("b@CAMPAIGN.example", s), 1);
    EXPECT_EQ(groups.group("a@trickle.example", s), 0);
    EXPECT_EQ(groups.groups(), 2u);
    // Their names, for the reply rules' sender scopes.
    EXPECT_EQ(groups.name_of(1), "campaign.example");
    EXPECT_EQ(groups.name_of(2), "boss@campaign.example");
    EXPECT_EQ(groups.name_of(0), "");
    EXPECT_EQ(groups.name_of(3), "");
}

TEST(SenderGroups, PatternTablesAndTheFirstAnswerWins) {
    TableDir dir;
    dir.write("senders.pcre", "/^bulk@/ concurrency=1\n/\\.example$/ rate=10/min\n");
    SenderGroups groups =
        SenderGroups::open({"pcre:" + dir.str() + "/senders.pcre", "static:concurrency=50"}, {});
    auto a = groups.find("bulk@x.example");
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->name, "bulk@x.example");
    EXPECT_EQ(a->limit, limit(1));
    auto b = groups.find("news@x.example");
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->limit, limit(0, 10, 60'000, 10));
    // The address is asked of every table before the domain is.
    auto c = groups.find("news@y.test");
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->name, "news@y.test");
    EXPECT_EQ(c->limit, limit(50));
}

} // namespace
