// The MX resolver's cache: clamped TTLs, expiry and its bound.
#include "mx_cache.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;
using std::chrono::seconds;

namespace {

MxAnswer answer(uint32_t ttl, std::string host = "mx.example.net") {
    return MxAnswer{.outcome = MxOutcome::answer, .hosts = {std::move(host)}, .ttl = seconds(ttl)};
}

const MxCache::Clock::time_point t0{};

} // namespace

TEST(MxCache, TtlsAreClampedByKind) {
    MxResolverOptions o; // positive 60 s..24 h, negative 60 s..1 h, failures 30 s
    MxCache c(o);
    EXPECT_EQ(c.ttl_for(answer(5)), seconds(60));
    EXPECT_EQ(c.ttl_for(answer(3600)), seconds(3600));
    EXPECT_EQ(c.ttl_for(answer(10'000'000)), seconds(86400));
    EXPECT_EQ(c.ttl_for(MxAnswer{.outcome = MxOutcome::nxdomain, .ttl = seconds(0)}), seconds(60));
    EXPECT_EQ(c.ttl_for(MxAnswer{.outcome = MxOutcome::no_mx, .ttl = seconds(86400)}),
              seconds(3600));
    EXPECT_EQ(c.ttl_for(MxAnswer{.outcome = MxOutcome::timeout}), seconds(30));
    EXPECT_EQ(c.ttl_for(MxAnswer{.outcome = MxOutcome::server_failure}), seconds(30));
    EXPECT_EQ(c.ttl_for(MxAnswer{.outcome = MxOutcome::busy}), seconds(0));
}

TEST(MxCache, AnAnswerExpiresAfterItsTtl) {
    MxCache c(MxResolverOptions{});
    c.put("example.org", answer(120), t0);
    ASSERT_NE(c.get("example.org", t0 + seconds(119)), nullptr);
    EXPECT_EQ(c.get("example.org", t0 + seconds(119))->hosts[0], "mx.example.net");
    EXPECT_EQ(c.get("example.org", t0 + seconds(120)), nullptr);
    EXPECT_EQ(c.size(), 0u); // dropped once seen expired
}

TEST(MxCache, BusyAndFailuresWithoutTtlAreNotKept) {
    MxResolverOptions o;
    o.failure_ttl = seconds(0);
    MxCache c(o);
    c.put("a.org", MxAnswer{.outcome = MxOutcome::busy}, t0);
    c.put("b.org", MxAnswer{.outcome = MxOutcome::timeout}, t0);
    EXPECT_EQ(c.size(), 0u);
}

TEST(MxCache, BoundedLeastRecentlyUsedFirst) {
    MxResolverOptions o;
    o.cache_size = 2;
    MxCache c(o);
    c.put("a.org", answer(300), t0);
    c.put("b.org", answer(300), t0);
    ASSERT_NE(c.get("a.org", t0), nullptr); // a is now the most recent
    c.put("c.org", answer(300), t0);
    EXPECT_EQ(c.size(), 2u);
    EXPECT_NE(c.get("a.org", t0), nullptr);
    EXPECT_EQ(c.get("b.org", t0), nullptr);
    EXPECT_NE(c.get("c.org", t0), nullptr);
    // A new answer for a key replaces the old one, and its expiry.
    c.put("a.org", answer(600, "mx2.example.net"), t0 + seconds(100));
    ASSERT_NE(c.get("a.org", t0 + seconds(650)), nullptr);
    EXPECT_EQ(c.get("a.org", t0 + seconds(650))->hosts[0], "mx2.example.net");
    EXPECT_EQ(c.size(), 2u);
}
