// The grammar of a reply rule's result (reply_action.hpp): what each form
// means, what is refused and why, and that text() parses back to the same
// action.  Also the rules' sliding windows (threshold_windows.hpp): counts
// within the period only, start again after an action, and bounded memory.
#include "reply_action.hpp"
#include "threshold_windows.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;

namespace {

ReplyAction parsed(std::string_view text) {
    auto a = parse_reply_action(text);
    EXPECT_TRUE(a) << text << ": " << (a ? "" : a.error().message());
    return a ? *a : ReplyAction{};
}

std::string refused(std::string_view text) {
    auto a = parse_reply_action(text);
    EXPECT_FALSE(a) << text << " was taken as " << (a ? a->text() : "");
    return a ? "" : a.error().message();
}

} // namespace

TEST(ReplyAction, TheIssuesExample) {
    ReplyAction a = parsed("suspend provider after 3/10m for 2h");
    EXPECT_EQ(a.kind, ReplyAction::Kind::suspend);
    EXPECT_EQ(a.scope, ReplyAction::Scope::provider);
    EXPECT_EQ(a.after_count, 3);
    EXPECT_EQ(a.after_period_ms, 600'000);
    EXPECT_EQ(a.duration_ms, 7'200'000);
    EXPECT_EQ(a.duration_seconds(), 7200);
    EXPECT_EQ(a.until_delivered, 0);
}

TEST(ReplyAction, EachActionAndScope) {
    ReplyAction t = parsed("throttle 2 destination for 30m");
    EXPECT_EQ(t.kind, ReplyAction::Kind::throttle);
    EXPECT_EQ(t.concurrency, 2);
    EXPECT_EQ(t.after_count, 1); // every match acts
    ReplyAction r = parsed("RATE 10/1m Transport until 100 delivered");
    EXPECT_EQ(r.kind, ReplyAction::Kind::rate);
    EXPECT_EQ(r.scope, ReplyAction::Scope::transport);
    EXPECT_EQ(r.rate_count, 10);
    EXPECT_EQ(r.rate_period_ms, 60'000);
    EXPECT_EQ(r.pause_seconds(), 6);
    EXPECT_EQ(r.until_delivered, 100);
    EXPECT_EQ(parsed("warn sender-destination after 5/1h").scope,
              ReplyAction::Scope::sender_destination);
    EXPECT_EQ(parsed("warn sender-provider").scope, ReplyAction::Scope::sender_provider);
    // Clauses in any order.
    EXPECT_EQ(parsed("throttle 1 destination for 1h after 2/5m"),
              parsed("throttle 1 destination after 2/5m for 1h"));
}

TEST(ReplyAction, ABackoffNamesAProfile) {
    ReplyAction b = parsed("Backoff Slow provider after 2/5m for 1h until 50 delivered");
    EXPECT_EQ(b.kind, ReplyAction::Kind::backoff);
    EXPECT_EQ(b.profile, "slow"); // names are matched without regard to case
    EXPECT_EQ(b.scope, ReplyAction::Scope::provider);
    EXPECT_EQ(b.duration_ms, 3'600'000);
    EXPECT_EQ(b.until_delivered, 50);
    // Its limits are the profile's, given by the table: none yet.
    EXPECT_EQ(b.concurrency, 0);
    EXPECT_EQ(b.rate_count, 0);
    EXPECT_EQ(b.text(), "backoff slow provider after 2/300000ms for 3600000ms until 50 delivered");
    EXPECT_EQ(parsed("backoff gmail-4.7.28_v2 destination until 1 delivered").profile,
              "gmail-4.7.28_v2");
    EXPECT_EQ(refused("backoff slow destination"),
              "backoff needs for DURATION or until N delivered");
    EXPECT_EQ(refused("backoff destination for 1h"), "unknown scope \"for\"");
    EXPECT_EQ(refused("backoff"), "backoff needs a profile name (letters, digits, '.', '_', '-')");
    EXPECT_EQ(refused("backoff sl/ow destination for 1h"),
              "backoff needs a profile name (letters, digits, '.', '_', '-')");
    EXPECT_EQ(refused("backoff " + std::string(65, 'a') + " destination for 1h"),
              "backoff needs a profile name (letters, digits, '.', '_', '-')");
    EXPECT_TRUE(parse_reply_action("backoff " + std::string(64, 'a') + " destination for 1h"));
}

TEST(ReplyAction, ARateAboveOneASecondPausesOneSecond) {
    // The core pauses in whole seconds: 5/s is kept as 1/s.
    EXPECT_EQ(parsed("rate 5/s destination for 1h").pause_seconds(), 1);
    EXPECT_EQ(parsed("rate 2/3s destination for 1h").pause_seconds(), 2); // 1.5 s up
}

TEST(ReplyAction, BadResultsSayWhy) {
    EXPECT_EQ(refused(""), "no action");
    EXPECT_EQ(refused("stop destination for 1h"), "unknown action \"stop\"");
    EXPECT_EQ(refused("suspend host for 1h"), "unknown scope \"host\"");
    EXPECT_EQ(refused("suspend destination"), "suspend needs for DURATION");
    EXPECT_EQ(refused("suspend destination for 1h until 5 delivered"),
              "nothing is delivered to end a suspension");
    EXPECT_EQ(refused("throttle 0 destination for 1h"),
              "throttle needs a concurrency of 1 or more");
    EXPECT_EQ(refused("throttle 3 destination"),
              "throttle needs for DURATION or until N delivered");
    EXPECT_EQ(refused("warn destination for 1h"), "warn lasts no time");
    EXPECT_EQ(refused("suspend destination for 1h for 2h"), "unexpected \"for\"");
    EXPECT_EQ(refused("suspend destination for"), "for needs a duration");
    EXPECT_EQ(refused("suspend destination for 1fortnight"), "for \"1fortnight\": bad duration");
    EXPECT_EQ(refused("warn destination after 3/10m,5"), "after \"3/10m,5\": expected N/PERIOD");
    EXPECT_EQ(refused("warn destination after 1001/1h"), "after \"1001/1h\": more than 1000");
    EXPECT_EQ(refused("warn destination after 3/8d"),
              "after \"3/8d\": a period longer than a week");
    EXPECT_EQ(refused("throttle 1 destination until 5"), "until needs N delivered");
    EXPECT_EQ(refused("rate 1/99999999999d destination for 1h"),
              "rate \"1/99999999999d\": expected N/PERIOD");
    EXPECT_FALSE(parse_reply_action(std::string(600, ' ') + "warn destination"));
}

TEST(ReplyAction, TextParsesBack) {
    for (const char* text :
         {"suspend provider after 3/10m for 2h", "throttle 7 transport until 12 delivered",
          "rate 3/90s sender-provider for 1d until 5 delivered", "warn destination",
          "warn destination after 1/1h", "suspend destination for 500ms",
          "backoff slow sender-destination for 2h until 3 delivered"}) {
        ReplyAction a = parsed(text);
        EXPECT_EQ(parsed(a.text()), a) << text << " -> " << a.text();
    }
}

TEST(ThresholdWindows, CountsWithinThePeriodOnly) {
    ThresholdWindows w;
    // 3 in 10 minutes (600,000 ms).
    EXPECT_FALSE(w.hit(0, "smtp:d", 3, 600'000, 0));
    EXPECT_FALSE(w.hit(0, "smtp:d", 3, 600'000, 100'000));
    EXPECT_FALSE(w.hit(0, "smtp:e", 3, 600'000, 150'000)); // another key
    EXPECT_FALSE(w.hit(1, "smtp:d", 3, 600'000, 150'000)); // another rule
    // The first has left the period: still two.
    EXPECT_FALSE(w.hit(0, "smtp:d", 3, 600'000, 600'000));
    EXPECT_TRUE(w.hit(0, "smtp:d", 3, 600'000, 650'000));
    // It starts again empty.
    EXPECT_FALSE(w.hit(0, "smtp:d", 3, 600'000, 660'000));
    // A count of 1 acts on every match and keeps nothing.
    EXPECT_TRUE(w.hit(2, "smtp:d", 1, 0, 0));
    w.forget("smtp:d");      // every rule's
    EXPECT_EQ(w.size(), 1u); // smtp:e's
}

TEST(ThresholdWindows, MemoryIsBounded) {
    ThresholdWindows w(100);
    for (int i = 0; i < 10'000; ++i)
        w.hit(0, "d" + std::to_string(i), 5, 60'000, i);
    EXPECT_LE(w.size(), 100u);
    // A window still counting survives a flood of stale ones.
    ThresholdWindows v(10);
    v.hit(0, "live", 2, 1'000'000, 0);
    for (int i = 0; i < 100; ++i)
        v.hit(1, "old" + std::to_string(i), 2, 10, 20 * i + 5);
    EXPECT_TRUE(v.hit(0, "live", 2, 1'000'000, 3000));
}
