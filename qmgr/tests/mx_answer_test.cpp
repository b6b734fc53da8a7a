// A DNS reply to an MX query made into an MxAnswer.
#include "dns_message.hpp"
#include "mx_answer.hpp"

#include <ares.h>
#include <gtest/gtest.h>

using namespace cqmgr::qmgr;
using namespace cqmgr::qmgr::testing;
using std::chrono::seconds;

namespace {

MxAnswer convert(int status, const Bytes& reply, const std::string& domain = "example.org") {
    return mx_answer_from_reply(status, reply, domain);
}

using Hosts = std::vector<std::string>;

} // namespace

TEST(MxAnswer, HostsByPreferenceLowercasedOnceWithTheLeastTtl) {
    auto r = reply("example.org", 0,
                   {mx("example.org", 20, "B.Example.NET", 300),
                    mx("example.org", 10, "mx2.example.net", 120),
                    mx("example.org", 10, "MX1.example.net", 500),
                    mx("example.org", 30, "b.example.net", 60)});
    MxAnswer a = convert(ARES_SUCCESS, r);
    EXPECT_EQ(a.outcome, MxOutcome::answer);
    EXPECT_EQ(a.hosts, (Hosts{"mx1.example.net", "mx2.example.net", "b.example.net"}));
    EXPECT_EQ(a.ttl, seconds(60));
    EXPECT_TRUE(a.resolved());
}

TEST(MxAnswer, CnameAnswersAreSkipped) {
    auto r = reply(
        "alias.example.org", 0,
        {cname("alias.example.org", "example.org"), mx("example.org", 10, "mx.example.net", 90)});
    MxAnswer a = convert(ARES_SUCCESS, r, "alias.example.org");
    EXPECT_EQ(a.hosts, Hosts{"mx.example.net"});
    EXPECT_EQ(a.ttl, seconds(90));
    // A CNAME alone: no MX record, the domain is its own host.
    a = convert(ARES_SUCCESS, reply("alias.example.org", 0, {cname("alias.example.org", "x.org")}),
                "alias.example.org");
    EXPECT_EQ(a.outcome, MxOutcome::no_mx);
    EXPECT_EQ(a.hosts, Hosts{"alias.example.org"});
}

TEST(MxAnswer, NullMxNamesNoHost) {
    MxAnswer a = convert(ARES_SUCCESS, reply("example.org", 0, {mx("example.org", 0, "")}));
    EXPECT_EQ(a.outcome, MxOutcome::answer);
    EXPECT_TRUE(a.hosts.empty());
}

TEST(MxAnswer, NoMxRecordsTheDomainIsItsOwnHost) {
    auto r = reply("example.org", 0, {}, {soa("example.org", 900, 300)});
    MxAnswer a = convert(ARES_ENODATA, r);
    EXPECT_EQ(a.outcome, MxOutcome::no_mx);
    EXPECT_EQ(a.hosts, Hosts{"example.org"});
    EXPECT_EQ(a.ttl, seconds(300)); // the lesser of the SOA's TTL and MINIMUM
    EXPECT_TRUE(a.resolved());
    // Without an SOA record: no TTL of its own.
    EXPECT_EQ(convert(ARES_ENODATA, reply("example.org", 0, {})).ttl, seconds(0));
    EXPECT_EQ(convert(ARES_ENODATA, {}).hosts, Hosts{"example.org"});
}

TEST(MxAnswer, NxdomainWithItsNegativeTtl) {
    MxAnswer a = convert(ARES_ENOTFOUND, reply("example.org", 3, {}, {soa("org", 100, 3600)}));
    EXPECT_EQ(a.outcome, MxOutcome::nxdomain);
    EXPECT_TRUE(a.hosts.empty());
    EXPECT_EQ(a.ttl, seconds(100));
    EXPECT_FALSE(a.resolved());
    EXPECT_EQ(convert(ARES_ENOTFOUND, {}).outcome, MxOutcome::nxdomain);
}

TEST(MxAnswer, FailuresByStatus) {
    EXPECT_EQ(convert(ARES_ETIMEOUT, {}).outcome, MxOutcome::timeout);
    for (int status : {ARES_ESERVFAIL, ARES_EREFUSED, ARES_ECONNREFUSED, ARES_EFORMERR,
                       ARES_ENOTIMP, ARES_EBADRESP, ARES_ECANCELLED, ARES_EBADNAME})
        EXPECT_EQ(convert(status, {}).outcome, MxOutcome::server_failure) << status;
    EXPECT_STREQ(outcome_name(MxOutcome::no_mx), "no_mx");
    EXPECT_STREQ(outcome_name(MxOutcome::busy), "busy");
}

TEST(MxAnswer, MalformedRepliesAreServerFailures) {
    auto good = reply("example.org", 0, {mx("example.org", 10, "mx.example.net")});
    // Cut anywhere inside the answer.
    for (size_t len = 0; len < good.size(); ++len) {
        Bytes cut(good.begin(), good.begin() + long(len));
        EXPECT_EQ(convert(ARES_SUCCESS, cut).outcome, MxOutcome::server_failure) << len;
    }
    EXPECT_EQ(convert(ARES_SUCCESS, good).outcome, MxOutcome::answer);
    // A host that is not a plain host name (c-ares escapes the blank).
    EXPECT_EQ(
        convert(ARES_SUCCESS, reply("example.org", 0, {mx("example.org", 10, "m x.example.net")}))
            .outcome,
        MxOutcome::server_failure);
    // Too many hosts to be taken whole.
    std::vector<Record> many;
    for (size_t i = 0; i <= max_mx_hosts; ++i)
        many.push_back(mx("example.org", 10, "mx" + std::to_string(i) + ".example.net"));
    EXPECT_EQ(convert(ARES_SUCCESS, reply("example.org", 0, many)).outcome,
              MxOutcome::server_failure);
    many.pop_back();
    EXPECT_EQ(convert(ARES_SUCCESS, reply("example.org", 0, many)).hosts.size(), max_mx_hosts);
}

TEST(MxAnswer, TtlWithTheTopBitSetIsZero) {
    auto r = reply("example.org", 0, {mx("example.org", 10, "mx.example.net", 0x80000000u)});
    EXPECT_EQ(convert(ARES_SUCCESS, r).ttl, seconds(0));
}

TEST(MxAnswer, LookupKeys) {
    EXPECT_EQ(mx_lookup_key("Example.ORG."), "example.org");
    EXPECT_EQ(mx_lookup_key("_dmarc.x-y.example"), "_dmarc.x-y.example");
    for (const char* bad : {"", ".", "a..b", ".a", "[1.2.3.4]", "a.b:25", "a b", "a,b", "a\\.b"})
        EXPECT_EQ(mx_lookup_key(bad), "") << bad;
    EXPECT_EQ(mx_lookup_key(std::string(63, 'a') + ".org").size(), 67u);
    EXPECT_EQ(mx_lookup_key(std::string(64, 'a') + ".org"), "");
}
