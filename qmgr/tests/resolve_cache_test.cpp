// The resolve cache: stock's single answer by default; with a limit,
// answers per address or per domain, their 30 s life, the limit, and the
// connection they came from.
#include "resolve_cache.hpp"
#include "resolve_reply.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

using Clock = ResolveCache::Clock;
using std::chrono::seconds;

protocol::ResolveReply answer(std::string transport, std::string nexthop, std::string rcpt,
                              int flags = protocol::resolve_flag::class_local) {
    return cqmgr::qmgr::testing::resolve_reply(std::move(transport), std::move(nexthop),
                                               std::move(rcpt), flags);
}

ResolverSettings plain_settings() {
    ResolverSettings s;
    s.rewrite_service_found = true;
    return s;
}

TEST(ResolveCacheConfig, ZeroIsStocksSingleAnswer) {
    auto c = resolve_cache_config(0, plain_settings());
    EXPECT_EQ(c.limit, 0u);
    EXPECT_FALSE(c.domain_answers);
    EXPECT_TRUE(c.sender_matters);
}

TEST(ResolveCacheConfig, DomainAnswersOnlyWithoutAddressTables) {
    auto s = plain_settings();
    auto c = resolve_cache_config(100, s);
    EXPECT_TRUE(c.domain_answers);
    EXPECT_FALSE(c.sender_matters);

    s.transport_maps = "hash:/etc/postfix/transport";
    EXPECT_FALSE(resolve_cache_config(100, s).domain_answers);
    s = plain_settings();
    s.relocated_maps = "hash:/etc/postfix/relocated";
    EXPECT_FALSE(resolve_cache_config(100, s).domain_answers);
    s = plain_settings();
    s.rewrite_service_overrides = true;
    c = resolve_cache_config(100, s);
    EXPECT_FALSE(c.domain_answers);
    EXPECT_TRUE(c.sender_matters);
    s = plain_settings();
    s.rewrite_service_found = false;
    EXPECT_FALSE(resolve_cache_config(100, s).domain_answers);
}

TEST(ResolveCacheConfig, SenderMattersWithSenderDependentTables) {
    auto s = plain_settings();
    s.sender_dependent_relayhost_maps = "hash:/etc/postfix/sender_relay";
    EXPECT_TRUE(resolve_cache_config(100, s).sender_matters);
    s = plain_settings();
    s.sender_dependent_default_transport_maps = "hash:/etc/postfix/sdt";
    auto c = resolve_cache_config(100, s);
    EXPECT_TRUE(c.sender_matters);
    EXPECT_TRUE(c.domain_answers);
}

TEST(ResolveCache, PlainLocalPartsAndDomains) {
    for (const char* ok : {"u1", "first.last", "a+tag", "x_y=z", "a-b"})
        EXPECT_TRUE(plain_local_part(ok)) << ok;
    for (const char* bad : {"", "-opt", ".a", "a.", "a..b", "a%b", "a!b", "a@b", "\"q\"", "a b",
                            "a\\b", "\xc3\xa9t\xc3\xa9", "a/b", "a#b"})
        EXPECT_FALSE(plain_local_part(bad)) << bad;
    for (const char* ok : {"example.com", "d1.example", "a-b.example", "localhost"})
        EXPECT_TRUE(plain_domain(ok)) << ok;
    for (const char* bad : {"", "example.com.", ".example", "a..b", "[127.0.0.1]", "a_b.example",
                            "ex@mple", "b\xc3\xbc\x63her.example"})
        EXPECT_FALSE(plain_domain(bad)) << bad;
}

TEST(ResolveCache, SingleAnswerLikeStock) {
    ResolveCache c(resolve_cache_config(0, plain_settings()));
    auto t = Clock::now();
    auto a = answer("smtp", "example.com", "u@example.com");
    EXPECT_FALSE(c.find("resolve", "s@x", "u@example.com", t, 1));
    c.store("resolve", "s@x", "u@example.com", a, t, 1);
    // The same question: answered, whatever the connection.
    EXPECT_EQ(c.find("resolve", "s@x", "u@example.com", t + seconds(29), 7), a);
    // Another sender, class or address: not answered.
    EXPECT_FALSE(c.find("resolve", "t@x", "u@example.com", t, 1));
    EXPECT_FALSE(c.find("verify", "s@x", "u@example.com", t, 1));
    EXPECT_FALSE(c.find("resolve", "s@x", "v@example.com", t, 1));
    // 30 s later: asked again.
    EXPECT_FALSE(c.find("resolve", "s@x", "u@example.com", t + seconds(30), 1));
    // The next answer replaces it, even one for an empty address, which is
    // never answered from the cache.
    c.store("resolve", "s@x", "", answer("error", "x", ""), t, 1);
    EXPECT_FALSE(c.find("resolve", "s@x", "u@example.com", t, 1));
    EXPECT_FALSE(c.find("resolve", "s@x", "", t, 1));
    EXPECT_EQ(c.size(), 1u);
}

TEST(ResolveCache, DomainAnswerServesPlainLocalParts) {
    ResolveCache c(resolve_cache_config(100, plain_settings()));
    auto t = Clock::now();
    c.store("resolve", "s@x", "u1@d1.example", answer("discard", "d1.example", "u1@d1.example"), t,
            1);
    auto hit = c.find("resolve", "other@y", "u2.z@d1.example", t + seconds(5), 1);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->transport, "discard");
    EXPECT_EQ(hit->nexthop, "d1.example");
    EXPECT_EQ(hit->recipient, "u2.z@d1.example");
    EXPECT_EQ(hit->flags, protocol::resolve_flag::class_local);
    // Not for a local part that is not plain, another domain (case
    // included), or the verify class.
    EXPECT_FALSE(c.find("resolve", "s@x", "a%b@d1.example", t, 1));
    EXPECT_FALSE(c.find("resolve", "s@x", "u2@D1.example", t, 1));
    EXPECT_FALSE(c.find("resolve", "s@x", "u2@d2.example", t, 1));
    EXPECT_FALSE(c.find("verify", "s@x", "u2@d1.example", t, 1));
    // Nor for an address with more than one '@', quoted or not, or none.
    for (const char* a : {"a@b@d1.example", "u2@d1.example@", "\"a@b\"@d1.example", "d1.example",
                          "u2@", "@d1.example"})
        EXPECT_FALSE(c.find("resolve", "s@x", a, t, 1)) << a;
}

TEST(ResolveCache, ChangedAddressIsKeptPerAddress) {
    ResolveCache c(resolve_cache_config(100, plain_settings()));
    auto t = Clock::now();
    // trivial-rewrite changed the address: the answer is for it alone.
    c.store("resolve", "s@x", "u1@d1", answer("smtp", "d1.example", "u1@d1.example"), t, 1);
    EXPECT_FALSE(c.find("resolve", "s@x", "u2@d1", t, 1));
    auto hit = c.find("resolve", "s@x", "u1@d1", t, 1);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->recipient, "u1@d1.example");
}

TEST(ResolveCache, PerAddressWithoutDomainAnswers) {
    auto s = plain_settings();
    s.transport_maps = "hash:/etc/postfix/transport";
    ResolveCache c(resolve_cache_config(100, s));
    auto t = Clock::now();
    c.store("resolve", "s@x", "u1@d1.example", answer("smtp", "d1.example", "u1@d1.example"), t, 1);
    EXPECT_FALSE(c.find("resolve", "s@x", "u2@d1.example", t, 1));
    EXPECT_TRUE(c.find("resolve", "s@x", "u1@d1.example", t, 1));
    // The sender does not matter here.
    EXPECT_TRUE(c.find("resolve", "t@x", "u1@d1.example", t, 1));
}

TEST(ResolveCache, SenderKeptApartWhenItMatters) {
    auto s = plain_settings();
    s.sender_dependent_relayhost_maps = "hash:/etc/postfix/sender_relay";
    ResolveCache c(resolve_cache_config(100, s));
    auto t = Clock::now();
    c.store("resolve", "s@x", "u1@d1.example", answer("smtp", "[relay]", "u1@d1.example"), t, 1);
    EXPECT_TRUE(c.find("resolve", "s@x", "u2@d1.example", t, 1));
    EXPECT_FALSE(c.find("resolve", "t@x", "u2@d1.example", t, 1));
}

TEST(ResolveCache, NotKeptFailuresOrDrainingServers) {
    ResolveCache c(resolve_cache_config(100, plain_settings()));
    auto t = Clock::now();
    c.store("resolve", "s@x", "u@d.example",
            answer("smtp", "d.example", "u@d.example", protocol::resolve_flag::fail), t, 1);
    EXPECT_FALSE(c.find("resolve", "s@x", "u@d.example", t, 1));
    auto a = answer("smtp", "d.example", "u@d.example");
    a.server_flags = 1;
    c.store("resolve", "s@x", "u@d.example", a, t, 1);
    EXPECT_FALSE(c.find("resolve", "s@x", "u@d.example", t, 1));
    EXPECT_EQ(c.size(), 0u);
}

TEST(ResolveCache, ANewConnectionDropsEverything) {
    ResolveCache c(resolve_cache_config(100, plain_settings()));
    auto t = Clock::now();
    c.store("resolve", "s@x", "u@d.example", answer("smtp", "d.example", "u@d.example"), t, 1);
    EXPECT_TRUE(c.find("resolve", "s@x", "u@d.example", t, 1));
    EXPECT_FALSE(c.find("resolve", "s@x", "u@d.example", t, 2));
    EXPECT_EQ(c.size(), 0u);
}

TEST(ResolveCache, AnswersExpireAndTheLimitHolds) {
    ResolveCache c(resolve_cache_config(3, plain_settings()));
    auto t = Clock::now();
    for (int i = 0; i < 5; ++i) {
        std::string d = "d" + std::to_string(i) + ".example";
        c.store("resolve", "s@x", "u@" + d, answer("smtp", d, "u@" + d), t + seconds(i), 1);
        EXPECT_LE(c.size(), 3u);
    }
    // The oldest two made room.
    EXPECT_FALSE(c.find("resolve", "s@x", "v@d0.example", t + seconds(5), 1));
    EXPECT_FALSE(c.find("resolve", "s@x", "v@d1.example", t + seconds(5), 1));
    for (int i = 2; i < 5; ++i)
        EXPECT_TRUE(
            c.find("resolve", "s@x", "v@d" + std::to_string(i) + ".example", t + seconds(5), 1));
    // d2's answer is 30 s old at t + 32 s: gone; d4's is not.
    EXPECT_FALSE(c.find("resolve", "s@x", "v@d2.example", t + seconds(32), 1));
    EXPECT_TRUE(c.find("resolve", "s@x", "v@d4.example", t + seconds(32), 1));
    // A store drops what has expired.
    c.store("resolve", "s@x", "u@d9.example", answer("smtp", "d9.example", "u@d9.example"),
            t + seconds(33), 1);
    EXPECT_EQ(c.size(), 2u);
}

TEST(ResolveCache, StoringAgainRenewsWithoutLosingTheEntry) {
    ResolveCache c(resolve_cache_config(2, plain_settings()));
    auto t = Clock::now();
    auto a = answer("smtp", "d.example", "u@d.example");
    c.store("resolve", "s@x", "u@d.example", a, t, 1);
    c.store("resolve", "s@x", "u@d.example", a, t + seconds(20), 1);
    c.store("resolve", "s@x", "u@e.example", answer("smtp", "e.example", "u@e.example"),
            t + seconds(21), 1);
    // The first order record of d is stale and skipped; d stays.
    EXPECT_TRUE(c.find("resolve", "s@x", "u@d.example", t + seconds(40), 1));
    c.store("resolve", "s@x", "u@f.example", answer("smtp", "f.example", "u@f.example"),
            t + seconds(41), 1);
    EXPECT_EQ(c.size(), 2u);
    EXPECT_FALSE(c.find("resolve", "s@x", "u@d.example", t + seconds(41), 1));
    EXPECT_TRUE(c.find("resolve", "s@x", "u@e.example", t + seconds(41), 1));
}

} // namespace
} // namespace cqmgr::qmgr
