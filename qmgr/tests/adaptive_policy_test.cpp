// The adaptive policy on a fake clock (milliseconds): the limit learned at
// a connection-limit strike, the pause learned at a rate-limit strike,
// slow probing upward, forgetting after a quiet time, and the slow start
// of destinations with nothing learned yet.
#include "adaptive_policy.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>
#include <vector>

using namespace cqmgr::qmgr;
using Limit = cqmgr::core::LearnedLimit;
using Why = AdaptivePolicy::Change::Why;

namespace {
constexpr auto conn = ReplyClass::connection_limit;
constexpr auto rate = ReplyClass::rate_limit;
const std::string d = "smtp:example.com";

// Settings without the slow start, for the rules that follow a strike.
AdaptiveSettings no_slow_start() {
    AdaptiveSettings s;
    s.slow_start = false;
    return s;
}
} // namespace

TEST(AdaptivePolicy, ConnectionLimitIsBusyAtTheStrikeMinusOne) {
    AdaptivePolicy p(no_slow_start());
    int64_t t = 1'000'000;
    // Successes without a limit change nothing.
    for (int i = 0; i < 10; ++i)
        EXPECT_FALSE(p.delivery(d, std::nullopt, 5, t += 100));
    // The 6th delivery at once was refused: the receiver allows 5.
    auto c = p.delivery(d, conn, 6, t += 100);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::strike);
    EXPECT_EQ(c->before, Limit{});
    EXPECT_EQ(c->after, (Limit{5, 0}));
    // A strike of a delivery that started before the limit was learned, at
    // a higher count, does not lower it further; a lower one does.
    EXPECT_FALSE(p.delivery(d, conn, 7, t += 10));
    c = p.delivery(d, conn, 4, t += 10);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{3, 0}));
    // Never below 1; other classes change nothing.
    EXPECT_EQ(p.delivery(d, conn, 1, t += 10)->after, (Limit{1, 0}));
    EXPECT_FALSE(p.delivery(d, ReplyClass::greylist, 1, t += 10));
    EXPECT_FALSE(p.delivery(d, ReplyClass::hard, 1, t += 10));
    EXPECT_FALSE(p.delivery(d, ReplyClass::other, 1, t += 10));
    EXPECT_EQ(p.limit(d), (Limit{1, 0}));
    EXPECT_EQ(p.limit("smtp:other.example"), Limit{});
}

TEST(AdaptivePolicy, ProbesUpAfterSuccessesAtTheLimit) {
    AdaptiveSettings s = no_slow_start();
    s.probe_deliveries = 3;
    s.probe_time_ms = 0;
    AdaptivePolicy p(s);
    int64_t t = 0;
    ASSERT_TRUE(p.delivery(d, conn, 6, t += 10));
    // Successes below the limit do not count: the limit held nothing back.
    for (int i = 0; i < 10; ++i)
        EXPECT_FALSE(p.delivery(d, std::nullopt, 4, t += 10));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 5, t += 10));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 5, t += 10));
    auto c = p.delivery(d, std::nullopt, 5, t += 10);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::probe);
    EXPECT_EQ(c->after, (Limit{6, 0}));
    // The probe struck: back under it.
    c = p.delivery(d, conn, 6, t += 10);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{5, 0}));
}

TEST(AdaptivePolicy, ProbesUpAfterQuietTimeAtTheLimit) {
    AdaptiveSettings s = no_slow_start();
    s.probe_deliveries = 0;
    s.probe_time_ms = 300'000;
    AdaptivePolicy p(s);
    int64_t t = 50'000;
    ASSERT_TRUE(p.delivery(d, conn, 3, t));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 2, t + 299'999));
    auto c = p.delivery(d, std::nullopt, 2, t + 300'000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{3, 0}));
    // The next probe waits a whole quiet time again.
    EXPECT_FALSE(p.delivery(d, std::nullopt, 3, t + 300'001));
    EXPECT_EQ(p.delivery(d, std::nullopt, 3, t + 600'000)->after, (Limit{4, 0}));
}

TEST(AdaptivePolicy, RateLimitGivesAPauseUnderTheStruckRate) {
    AdaptivePolicy p(no_slow_start());
    int64_t t = 0;
    // 2 deliveries a second for 10 s, then a rate-limit strike: 21 in 10 s.
    for (int i = 0; i < 20; ++i)
        EXPECT_FALSE(p.delivery(d, std::nullopt, 1, t += 500));
    auto c = p.delivery(d, rate, 1, t += 500);
    ASSERT_TRUE(c);
    // 2.1/s less 10 % is 1.89/s: one a second is the closest whole pause.
    EXPECT_EQ(c->after, (Limit{0, 1}));
    // A strike at a slow rate: 1 in 20 s plus this one, under 10 %: 12 s.
    AdaptivePolicy slow(no_slow_start());
    EXPECT_FALSE(slow.delivery(d, std::nullopt, 1, 0));
    c = slow.delivery(d, rate, 1, 20'000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{0, 12}));
    // Probing shortens the pause a second at a time.
    AdaptiveSettings s = no_slow_start();
    s.probe_deliveries = 1;
    AdaptivePolicy probing(s);
    ASSERT_TRUE(probing.delivery(d, std::nullopt, 1, 0) == std::nullopt);
    ASSERT_EQ(probing.delivery(d, rate, 1, 20'000)->after, (Limit{0, 12}));
    c = probing.delivery(d, std::nullopt, 1, 40'000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::probe);
    EXPECT_EQ(c->after, (Limit{0, 11}));
}

TEST(AdaptivePolicy, RateLimitLowersTheConcurrencyFirst) {
    AdaptivePolicy p(no_slow_start());
    int64_t t = 0;
    // 10 deliveries a second with 10 in flight, then a rate-limit strike:
    // 10 % fewer at once, then fewer again, down to one; then pauses.
    for (int i = 0; i < 20; ++i)
        EXPECT_FALSE(p.delivery(d, std::nullopt, 10, t += 100));
    EXPECT_EQ(p.delivery(d, rate, 10, t += 100)->after, (Limit{9, 0}));
    // Refusals of deliveries sent before that step, or before the receiver
    // took one at the new pace, are its count of the old pace: nothing.
    int64_t cut = t;
    EXPECT_FALSE(p.delivery(d, rate, 10, cut + 100, cut - 500));
    EXPECT_FALSE(p.delivery(d, rate, 9, cut + 200, cut + 150));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 9, cut + 300, cut - 10)); // sent before
    EXPECT_FALSE(p.delivery(d, rate, 9, cut + 400, cut + 350));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 9, cut + 500, cut + 450)); // the new pace works
    t = cut + 500;
    EXPECT_EQ(p.delivery(d, rate, 9, t += 100)->after, (Limit{8, 0}));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 8, t += 100));
    // Whatever the minute's rate (here under one a second): two at once
    // refused, one at a time.
    t += 60'000;
    EXPECT_EQ(p.delivery(d, rate, 2, t += 1000)->after, (Limit{1, 0}));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 1, t += 1000));
    auto c = p.delivery(d, rate, 1, t += 100);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{1, 1}));
}

TEST(AdaptivePolicy, APauseCountsTheDeliveryTime) {
    // One at a time, each delivery taking 1 s, back to back: 1/s. A strike
    // wants 10 % under that: a period of 1.11 s, of which the delivery
    // takes 1 s: a pause of 1 s (not 2 s, as if the pause were the period).
    AdaptivePolicy p(no_slow_start());
    int64_t t = 0;
    for (int i = 0; i < 30; ++i, t += 1000)
        EXPECT_FALSE(p.delivery(d, std::nullopt, 1, t + 1000, t));
    auto c = p.delivery(d, rate, 1, t + 50, t);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{0, 1}));
    // Refused at 1 s pauses (one every 2 s): 10 % under that pace.
    t += 50;
    for (int i = 0; i < 3; ++i, t += 2000)
        EXPECT_FALSE(p.delivery(d, std::nullopt, 1, t + 1000, t));
    c = p.delivery(d, rate, 1, t + 50, t);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{0, 2}));
    // At 10 s pauses, 10 % under one every 11 s: 12 s.
    AdaptiveSettings no_probes = no_slow_start();
    no_probes.probe_time_ms = 0;
    AdaptivePolicy slow(no_probes);
    slow.restore(d, Limit{0, 10}, 0);
    t = 1'000'000;
    for (int i = 0; i < 3; ++i, t += 11'000)
        EXPECT_FALSE(slow.delivery(d, std::nullopt, 1, t + 1000, t));
    c = slow.delivery(d, rate, 1, t + 50, t);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{0, 12}));
}

TEST(AdaptivePolicy, ForgetsAfterAQuietHorizon) {
    AdaptiveSettings s = no_slow_start();
    s.forget_time_ms = 3'600'000;
    s.probe_time_ms = 0;
    s.probe_deliveries = 0;
    AdaptivePolicy p(s);
    ASSERT_TRUE(p.delivery(d, conn, 6, 1000));
    ASSERT_FALSE(p.delivery("smtp:b.example", std::nullopt, 1, 1000));
    EXPECT_EQ(p.tracked(), 2u);
    EXPECT_TRUE(p.sweep(3'600'999).empty());
    // Idle destinations without a limit are dropped at once.
    EXPECT_EQ(p.tracked(), 1u);
    auto gone = p.sweep(3'601'000);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].dest, d);
    EXPECT_EQ(gone[0].why, Why::forget);
    EXPECT_EQ(gone[0].before, (Limit{5, 0}));
    EXPECT_EQ(gone[0].after, Limit{});
    EXPECT_EQ(p.limit(d), Limit{});
    EXPECT_EQ(p.tracked(), 0u);
}

TEST(AdaptivePolicy, SlowStartLetsOneAboveWhatSucceeded) {
    AdaptivePolicy p;
    int64_t t = 0;
    // The first window's five, launched before anything is known.
    for (int busy = 1; busy <= 5; ++busy)
        p.started(d, busy, 20, t);
    EXPECT_EQ(p.limit(d), Limit{});
    EXPECT_TRUE(p.ramping(d));
    // The first success caps the queue at what is in flight already...
    auto c = p.delivery(d, std::nullopt, 1, t += 1000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::ramp);
    EXPECT_EQ(c->after, (Limit{5, 0}));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 3, t += 10));
    // ...and each success at the top lets one more out.
    EXPECT_EQ(p.delivery(d, std::nullopt, 5, t += 10)->after, (Limit{6, 0}));
    p.started(d, 6, 20, t);
    EXPECT_FALSE(p.delivery(d, std::nullopt, 5, t += 10));
    c = p.delivery(d, std::nullopt, 6, t += 1000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::ramp);
    EXPECT_EQ(c->after, (Limit{7, 0}));
    EXPECT_TRUE(p.ramping(d));
}

namespace {
// Slow start: the first window's five started, the 5th succeeded (cap 6),
// and the 6th has started; `t` moves on.
void sixth_started(AdaptivePolicy& p, int ceiling, int64_t& t) {
    for (int busy = 1; busy <= 5; ++busy)
        p.started(d, busy, ceiling, t);
    ASSERT_EQ(p.delivery(d, std::nullopt, 5, t += 1000)->after, (Limit{6, 0}));
    p.started(d, 6, ceiling, t);
}
} // namespace

TEST(AdaptivePolicy, SlowStartEndsAtTheFirstStrike) {
    AdaptivePolicy p;
    int64_t t = 0;
    sixth_started(p, 20, t);
    // The 6th was refused: learned 5, logged as such though the cap was 6.
    auto c = p.delivery(d, conn, 6, t += 10);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::strike);
    EXPECT_EQ(c->before, (Limit{6, 0}));
    EXPECT_EQ(c->after, (Limit{5, 0}));
    EXPECT_FALSE(p.ramping(d));
    // From here on the slow probing rules: successes at 5 change nothing.
    for (int i = 0; i < 10; ++i)
        EXPECT_FALSE(p.delivery(d, std::nullopt, 5, t += 10));
    // A strike ends a slow start that had no cap yet too.
    AdaptivePolicy q;
    q.started(d, 1, 20, 0);
    c = q.delivery(d, conn, 1, 10);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->after, (Limit{1, 0}));
}

TEST(AdaptivePolicy, SlowStartEndsAtTheTransportLimit) {
    AdaptivePolicy p;
    int64_t t = 0;
    sixth_started(p, 6, t);
    // Above 6 the transport's own limit holds: the cap goes.
    auto c = p.delivery(d, std::nullopt, 6, t += 1000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::ramp);
    EXPECT_EQ(c->after, Limit{});
    EXPECT_FALSE(p.ramping(d));
    EXPECT_FALSE(p.delivery(d, std::nullopt, 6, t += 1000));
}

TEST(AdaptivePolicy, IdleSlowStartsAreDropped) {
    AdaptivePolicy p;
    p.started(d, 1, 20, 0);
    ASSERT_EQ(p.delivery(d, std::nullopt, 1, 1000)->after, (Limit{2, 0}));
    EXPECT_TRUE(p.sweep(60'999).empty());
    auto gone = p.sweep(61'001);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].why, Why::ramp);
    EXPECT_EQ(gone[0].after, Limit{});
    EXPECT_EQ(p.tracked(), 0u);
}

TEST(AdaptivePolicy, ForgettingWhileMailFlowsIsASlowStartFromTheLimit) {
    AdaptiveSettings s;
    s.probe_deliveries = 0;
    s.probe_time_ms = 0;
    s.forget_time_ms = 3'600'000;
    AdaptivePolicy p(s);
    p.started(d, 6, 20, 0);
    ASSERT_EQ(p.delivery(d, conn, 6, 10)->after, (Limit{5, 0}));
    // Deliveries go on at the limit; an hour on, no strike.
    for (int64_t t = 1000; t < 3'600'000; t += 1000) {
        p.started(d, 5, 20, t);
        EXPECT_FALSE(p.delivery(d, std::nullopt, 5, t + 500));
    }
    auto gone = p.sweep(3'600'010);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].why, Why::forget);
    EXPECT_EQ(gone[0].before, (Limit{5, 0}));
    EXPECT_EQ(gone[0].after, (Limit{6, 0}));
    EXPECT_TRUE(p.ramping(d));
    // Idle, the slow start goes too.
    gone = p.sweep(3'700'000);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].after, Limit{});
    EXPECT_EQ(p.tracked(), 0u);
}

namespace {
// `n` deliveries to a receiver that refuses a 6th connection, with the
// window moved by the default feedback (+1 a success, -1 a failure; at
// most the busy count + 5 and 20) under the policy's cap: how many were
// refused. Accepted deliveries take 1 s, refused ones 10 ms.
int refused_in_burst(AdaptiveSettings s, int n = 200) {
    AdaptivePolicy p(s);
    struct Flight {
        int64_t end;
        int busy;
        bool refused;
    };
    std::vector<Flight> flying;
    int window = 5, busy = 0, todo = n, refused = 0;
    int64_t t = 0;
    while (todo > 0 || !flying.empty()) {
        for (;;) {
            int room = window;
            if (int cap = p.limit(d).concurrency; cap > 0) room = std::min(room, cap);
            if (todo == 0 || busy >= room) break;
            ++busy;
            --todo;
            p.started(d, busy, 20, t);
            bool no = busy > 5;
            flying.push_back({t + (no ? 10 : 1000), busy, no});
        }
        auto next =
            std::min_element(flying.begin(), flying.end(),
                             [](const Flight& a, const Flight& b) { return a.end < b.end; });
        Flight f = *next;
        flying.erase(next);
        t = f.end;
        --busy;
        if (f.refused) {
            ++refused;
            ++todo; // tried again later
            p.delivery(d, conn, f.busy, t);
            window = std::max(window - 1, 1);
        } else {
            p.delivery(d, std::nullopt, f.busy, t);
            if (window < busy + 5 && window < 20) ++window;
        }
    }
    return refused;
}
} // namespace

TEST(AdaptivePolicy, ASlowStartFindsTheLimitWithOneRefusal) {
    EXPECT_EQ(refused_in_burst(AdaptiveSettings{}), 1);
    // Without it, the feedback launches several past the limit at once.
    EXPECT_GT(refused_in_burst(no_slow_start()), 1);
}

TEST(AdaptivePolicy, ProbingUpwardCostsOneRefusalAProbe) {
    // 20,000 deliveries at 5 a second (4,000 s): a probe every 500
    // successes at the limit or 300 s, each refused once.
    int refused = refused_in_burst(AdaptiveSettings{}, 20'000);
    EXPECT_LE(refused, 1 + 20'000 / 500);
    EXPECT_LT(refused * 100.0 / 20'000, 0.25);
}

TEST(AdaptivePolicy, RestoredLimitProbesAndIsForgottenFromItsTime) {
    AdaptiveSettings s;
    s.forget_time_ms = 3'600'000;
    s.probe_time_ms = 300'000;
    s.probe_deliveries = 0;
    AdaptivePolicy p(s);
    // Learned at 1,000,000 by an earlier run, taken up 100 s later.
    p.restore(d, Limit{4, 0}, 1'000'000);
    EXPECT_EQ(p.limit(d), (Limit{4, 0}));
    // The quiet time counts from when it was learned: a probe at 300 s.
    EXPECT_FALSE(p.delivery(d, std::nullopt, 4, 1'299'999));
    auto c = p.delivery(d, std::nullopt, 4, 1'300'000);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->why, Why::probe);
    EXPECT_EQ(c->after, (Limit{5, 0}));
    // And forgetting from the last probe.
    EXPECT_TRUE(p.sweep(1'300'000 + 3'599'999).empty());
    auto gone = p.sweep(1'300'000 + 3'600'000);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].before, (Limit{5, 0}));
}

namespace {
// What an hour of mail to a rate-limited receiver came to.
struct RateHour {
    int waiting = 0;   // mail not delivered at the end
    int delivered = 0; // deliveries the receiver took
    int refused = 0;   // deliveries it refused (each a deferral)
    int max_pause = 0; // the longest pause learned after 10 minutes, seconds
};

// An hour of mail to a receiver that takes `per_window` messages per
// 10 s from a client (anvil: the count starts over 10 s after the first
// message of a window, refused ones count too) and refuses the rest with
// a rate limit at MAIL FROM (50 ms); an accepted delivery takes 1 s (1 s
// per DATA, as the soak's limited receiver). A message arrives every
// `steady_ms`, and `burst` more at once every minute. Deliveries start as the learned limit allows:
// at most 3 at once (the receiver's connection limit, here the transport's), or one at a time and
// the pause after each under a rate delay, as the core runs them. Refused mail waits 60 s before it
// is tried again.
RateHour rate_limited_hour(AdaptiveSettings s, int per_window, int64_t steady_ms, int burst) {
    AdaptivePolicy p(s);
    struct Flight {
        int64_t start, end;
        int busy;
        bool refused;
    };
    std::vector<Flight> flying;
    std::multiset<int64_t> ready; // when each waiting message may go
    int64_t window_start = -10'000, pause_until = 0;
    int count = 0;
    RateHour out;
    for (int64_t t = 0; t < 3'600'000; t += 10) {
        if (t % steady_ms == 0) ready.insert(t);
        if (t % 60'000 == 0)
            for (int i = 0; i < burst; ++i)
                ready.insert(t);
        for (auto it = flying.begin(); it != flying.end();) {
            if (it->end > t) {
                ++it;
                continue;
            }
            Flight f = *it;
            it = flying.erase(it);
            if (f.refused) {
                ++out.refused;
                ready.insert(t + 60'000);
            } else {
                ++out.delivered;
            }
            auto cls = f.refused ? std::optional<ReplyClass>(rate) : std::nullopt;
            p.delivery(d, cls, f.busy, t, f.start);
            Limit l = p.limit(d);
            if (t >= 600'000) out.max_pause = std::max(out.max_pause, l.rate_delay);
            if (l.rate_delay > 0) pause_until = t + l.rate_delay * 1000;
        }
        for (;;) {
            Limit l = p.limit(d);
            int room = l.concurrency > 0 ? std::min(l.concurrency, 3) : 3;
            if (l.rate_delay > 0) room = t >= pause_until ? 1 : 0;
            int busy = static_cast<int>(flying.size());
            if (busy >= room || ready.empty() || *ready.begin() > t) break;
            ready.erase(ready.begin());
            p.started(d, busy + 1, 3, t);
            if (t - window_start >= 10'000) window_start = t, count = 0;
            bool refused = ++count > per_window;
            flying.push_back({t, t + (refused ? 50 : 1000), busy + 1, refused});
        }
    }
    out.waiting = static_cast<int>(ready.size() + flying.size());
    return out;
}

// The soak's settings: probe after 120 s.
AdaptiveSettings soak_settings() {
    AdaptiveSettings s;
    s.probe_time_ms = 120'000;
    return s;
}
} // namespace

TEST(AdaptivePolicy, ARateLimitLeavesTheDestinationWhatItAllows) {
    // The soak's limited receiver: 20 messages per 10 s (2/s), 1 s each,
    // offered 0.73/s, a third of it in bursts of 20. One at a time without
    // a pause (1/s) is under its limit and over what comes: the backlog
    // stays within a burst or two, where a pause after each delivery (2 s:
    // 0.33/s) would let it grow by 0.4 messages a second, for good.
    for (const AdaptiveSettings& s : {soak_settings(), AdaptiveSettings{}}) {
        RateHour h = rate_limited_hour(s, 20, 2'500, 20);
        EXPECT_LE(h.waiting, 30) << "delivered " << h.delivered << " refused " << h.refused;
        EXPECT_EQ(h.max_pause, 0);
        // Finding the limit, and each probe above it, costs a few refusals.
        EXPECT_LT(h.refused * 100.0 / h.delivered, 3.0) << "refused " << h.refused;
    }
}

TEST(AdaptivePolicy, ProbingAPauseDoesNotLengthenIt) {
    // 4 messages per 10 s (0.4/s), 1 s each, offered 0.3/s (a message
    // every 5 s and 6 more every minute): one at a time with a pause of
    // 2 s (0.33/s) is enough and 1 s (0.5/s) too much. Each probe down to
    // 1 s is struck back to 2 s, not to a pause worked out from the minute
    // before (mostly the slower pace that was fine), which comes out a
    // second longer every time round.
    RateHour h = rate_limited_hour(soak_settings(), 4, 5'000, 6);
    EXPECT_EQ(h.max_pause, 2) << "delivered " << h.delivered << " refused " << h.refused;
    EXPECT_LE(h.waiting, 30) << "delivered " << h.delivered << " refused " << h.refused;
}
