// The backoff profiles (backoff_profile.hpp, backoff_profiles.hpp): what a
// profile's value means, what is refused and why, that its text parses
// back; and the tables: a name found in the first table that has it, a
// name no table has or a bad value said as the reason a rule is bad.
#include "backoff_profiles.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;

namespace {

std::string refused(std::string_view text) {
    auto p = parse_backoff_profile(text);
    EXPECT_FALSE(p) << text << " was taken as " << (p ? backoff_profile_text(*p) : "");
    return p ? "" : p.error().message();
}

} // namespace

TEST(BackoffProfile, ConcurrencyAndRate) {
    auto p = parse_backoff_profile("concurrency=2 rate=30/1m");
    ASSERT_TRUE(p) << p.error().message();
    EXPECT_EQ(*p, (BackoffProfile{2, 30, 60'000}));
    EXPECT_EQ(parse_backoff_profile("  RATE=1/s\tConcurrency=5 "), (BackoffProfile{5, 1, 1000}));
    EXPECT_EQ(parse_backoff_profile("concurrency=1"), (BackoffProfile{1, 0, 0}));
    EXPECT_EQ(parse_backoff_profile("rate=10/1h"), (BackoffProfile{0, 10, 3'600'000}));
    for (const char* text : {"concurrency=2 rate=30/1m", "rate=7/90s", "concurrency=3"}) {
        auto a = parse_backoff_profile(text);
        ASSERT_TRUE(a);
        EXPECT_EQ(parse_backoff_profile(backoff_profile_text(*a)), *a) << text;
    }
}

TEST(BackoffProfile, BadValuesSayWhy) {
    EXPECT_EQ(refused(""), "no concurrency= or rate=");
    EXPECT_EQ(refused("fast"), "unexpected \"fast\"");
    EXPECT_EQ(refused("concurrency=0"), "\"concurrency=0\": expected a count of 1 to 1000000");
    EXPECT_EQ(refused("concurrency=two"), "\"concurrency=two\": expected a count of 1 to 1000000");
    EXPECT_EQ(refused("concurrency=1 concurrency=2"), "unexpected \"concurrency=2\"");
    EXPECT_EQ(refused("rate=30/1m,5"), "rate \"30/1m,5\": expected N/PERIOD");
    EXPECT_EQ(refused("rate=3/8d"), "rate \"3/8d\": a period longer than a week");
    EXPECT_EQ(refused(std::string(300, ' ') + "concurrency=1"), "longer than 256 bytes");
}

TEST(BackoffProfiles, TheFirstTableThatHasTheNameAnswers) {
    auto profiles = BackoffProfiles::open(
        {"inline:{ { slow = concurrency=2 rate=30/1m }, broken=concurrency=lots }",
         "inline:{ slow=concurrency=9, other=rate=1/s }"},
        {});
    EXPECT_EQ(profiles.find("slow"), (BackoffProfile{2, 30, 60'000}));
    EXPECT_EQ(profiles.find("SLOW"), (BackoffProfile{2, 30, 60'000}));
    EXPECT_EQ(profiles.find("other"), (BackoffProfile{0, 1, 1000}));
    EXPECT_EQ(profiles.find("none").error().message(),
              "no profile \"none\" in cqmgr_backoff_profiles");
    EXPECT_EQ(profiles.find("broken").error().message(),
              "cqmgr_backoff_profiles: bad value \"concurrency=lots\" for \"broken\": "
              "\"concurrency=lots\": expected a count of 1 to 1000000");
    // A rule's backoff gets the profile's limits; other actions are as
    // they were.
    auto b = profiles.resolve(*parse_reply_action("backoff slow destination for 1h"));
    ASSERT_TRUE(b);
    EXPECT_EQ(b->concurrency, 2);
    EXPECT_EQ(b->pause_seconds(), 2);
    auto t = *parse_reply_action("throttle 3 destination for 1h");
    EXPECT_EQ(profiles.resolve(t), t);
    EXPECT_FALSE(profiles.resolve(*parse_reply_action("backoff none destination for 1h")));
    // No table: every name is unknown.
    EXPECT_FALSE(BackoffProfiles{}.find("slow"));
}
