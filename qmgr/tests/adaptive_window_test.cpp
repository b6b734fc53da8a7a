// The window model of the adaptive limits on a fake clock (milliseconds):
// the quota a first strike teaches and the hold until the window's end,
// the quota per window after it, the first delivery of a window alone,
// strikes of earlier windows and strikes before anything succeeded,
// probing and forgetting; and a run against a receiver that counts as
// Postfix's anvil does.
#include "adaptive_window.hpp"

#include <algorithm>
#include <deque>
#include <gtest/gtest.h>

using namespace cqmgr::qmgr;
using Why = AdaptiveWindow::Change::Why;

namespace {
constexpr auto rate = ReplyClass::rate_limit;
const std::string d = "smtp:example.com";

// Settings that never probe.
WindowSettings no_probe() {
    WindowSettings s;
    s.probe_deliveries = 0;
    s.probe_time_ms = 0;
    return s;
}

// `n` deliveries start at `t` and succeed at `t` + 10 ms, one after the
// other (each start then its end).
void deliver(AdaptiveWindow& w, int n, int64_t& t) {
    for (int i = 0; i < n; ++i) {
        w.started(d, t);
        EXPECT_FALSE(w.delivery(d, std::nullopt, t, t + 10).change);
        t += 20;
    }
}

// Teaches `w` a quota of `quota`: that many deliveries succeed from `t`
// on, then the next one is refused.
void learn(AdaptiveWindow& w, int quota, int64_t& t) {
    deliver(w, quota, t);
    w.started(d, t);
    auto step = w.delivery(d, rate, t, t + 10);
    ASSERT_TRUE(step.change);
    EXPECT_EQ(step.change->after, quota);
}
} // namespace

TEST(AdaptiveWindow, FirstStrikeTeachesTheWindowsSuccessesAndHoldsToItsEnd) {
    AdaptiveWindow w(no_probe());
    int64_t t = 1'000'200; // 1000.2 s
    int64_t start = t;
    deliver(w, 60, t);
    // Nothing learned: no hold, no quota.
    EXPECT_EQ(w.core_part(d, t), cqmgr::core::LearnedLimit{});
    w.started(d, t);
    auto step = w.delivery(d, rate, t, t + 30);
    ASSERT_TRUE(step.change);
    EXPECT_EQ(step.change->why, Why::strike);
    EXPECT_EQ(step.change->before, 0);
    EXPECT_EQ(step.change->after, 60);
    EXPECT_TRUE(step.core);
    // Held until the window that started at 1000.2 s (stamped 1000 at
    // the latest 1000.7 s) is over: 1000 + 61.
    auto part = w.core_part(d, t + 30);
    EXPECT_EQ(part.quota, 60);
    EXPECT_EQ(part.window, 61);
    EXPECT_EQ(part.held_until, (start + 500) / 1000 + 61);
    EXPECT_EQ(part.held_until, 1061);
    EXPECT_EQ(part.concurrency, 0);
    // The hold is gone from the core's part once its time has come.
    EXPECT_EQ(w.core_part(d, 1'061'000).held_until, 0);
}

TEST(AdaptiveWindow, QuotaPerWindowWithTheFirstDeliveryAlone) {
    AdaptiveWindow w(no_probe());
    int64_t t = 2'000'000;
    learn(w, 5, t);
    // The next window opens at the first start after the hold: its first
    // delivery goes alone until it succeeds.
    t = 2'061'010;
    auto step = w.started(d, t);
    EXPECT_TRUE(step.core);
    EXPECT_EQ(w.core_part(d, t).concurrency, 1);
    EXPECT_EQ(w.core_part(d, t).held_until, 0);
    step = w.delivery(d, std::nullopt, t, t + 40);
    EXPECT_TRUE(step.core);
    EXPECT_EQ(w.core_part(d, t + 40).concurrency, 0);
    // Then the rest of the quota at once; the fifth start holds the
    // destination until this window is over.
    for (int i = 0; i < 3; ++i)
        EXPECT_FALSE(w.started(d, t + 50 + i).core);
    step = w.started(d, t + 60);
    EXPECT_TRUE(step.core);
    EXPECT_EQ(w.core_part(d, t + 60).held_until, 2061 + 61);
    // Their successes change nothing.
    for (int i = 0; i < 4; ++i)
        EXPECT_FALSE(w.delivery(d, std::nullopt, t + 50 + i, t + 100).core);
    EXPECT_EQ(w.quota(d), 5);
}

TEST(AdaptiveWindow, StrikesOfAnEarlierWindowTeachNothing) {
    AdaptiveWindow w(no_probe());
    int64_t t = 3'000'000;
    deliver(w, 10, t);
    int64_t old = t;
    w.started(d, old);
    w.started(d, old + 1);
    ASSERT_EQ(w.delivery(d, rate, old, old + 10).change->after, 10);
    // A new window; the other delivery of the old one is refused late.
    t = 3'061'000;
    w.started(d, t);
    auto step = w.delivery(d, rate, old + 1, t + 5);
    EXPECT_FALSE(step.change);
    EXPECT_FALSE(step.core);
    EXPECT_EQ(w.quota(d), 10);
    EXPECT_EQ(w.core_part(d, t + 5).held_until, 0);
}

TEST(AdaptiveWindow, ALaterStrikeLowersTheQuotaToThatWindowsSuccesses) {
    AdaptiveWindow w(no_probe());
    int64_t t = 4'000'000;
    learn(w, 60, t);
    // The receiver now takes 30 a window.
    t = 4'061'000;
    deliver(w, 30, t);
    w.started(d, t);
    auto step = w.delivery(d, rate, t, t + 10);
    ASSERT_TRUE(step.change);
    EXPECT_EQ(step.change->before, 60);
    EXPECT_EQ(step.change->after, 30);
    EXPECT_EQ(w.core_part(d, t + 10).held_until, 4061 + 61);
}

TEST(AdaptiveWindow, LateSuccessesOfTheStruckWindowRaiseTheQuota) {
    AdaptiveWindow w(no_probe());
    int64_t t = 5'000'000;
    deliver(w, 8, t);
    // Three in flight; the last one's MAIL came after the receiver's 10th.
    int64_t a = t, b = t + 1, c = t + 2;
    w.started(d, a);
    w.started(d, b);
    w.started(d, c);
    ASSERT_EQ(w.delivery(d, rate, c, t + 10).change->after, 8);
    EXPECT_FALSE(w.delivery(d, std::nullopt, a, t + 20).change);
    EXPECT_FALSE(w.delivery(d, std::nullopt, b, t + 30).change);
    EXPECT_EQ(w.quota(d), 10);
    // Told when the next window opens.
    auto step = w.started(d, 5'061'000);
    ASSERT_TRUE(step.change);
    EXPECT_EQ(step.change->before, 8);
    EXPECT_EQ(step.change->after, 10);
}

TEST(AdaptiveWindow, AStrikeBeforeAnySuccessWaitsForTheReceiversWindow) {
    AdaptiveWindow w(no_probe());
    int64_t t = 6'000'000;
    learn(w, 20, t);
    // Our window opened a second before the receiver's ended: the first
    // delivery (alone) is refused.  The quota stays; held to the next
    // second, then a new window.
    int64_t s = 6'061'020;
    w.started(d, s);
    auto step = w.delivery(d, rate, s, s + 30);
    EXPECT_FALSE(step.change);
    EXPECT_TRUE(step.core);
    EXPECT_EQ(w.core_part(d, s + 30).held_until, 6062);
    EXPECT_EQ(w.core_part(d, s + 30).concurrency, 0);
    // Refused again (the receiver counts from before a restart): held a
    // whole window from that start.
    s = 6'062'010;
    w.started(d, s);
    EXPECT_EQ(w.core_part(d, s).concurrency, 1);
    step = w.delivery(d, rate, s, s + 30);
    EXPECT_FALSE(step.change);
    EXPECT_EQ(w.core_part(d, s + 30).held_until, 6062 + 61);
    EXPECT_EQ(w.quota(d), 20);
    // A window that succeeds starts the count of early ones over.
    s = 6'123'000;
    w.started(d, s);
    w.delivery(d, std::nullopt, s, s + 10);
    s = 6'200'000;
    w.started(d, s);
    w.delivery(d, rate, s, s + 10);
    EXPECT_EQ(w.core_part(d, s + 10).held_until, 6201);
}

TEST(AdaptiveWindow, ProbesUpAfterAQuietTimeAtTheQuota) {
    WindowSettings s = no_probe();
    s.probe_time_ms = 300'000;
    AdaptiveWindow w(s);
    int64_t t = 7'000'000;
    learn(w, 3, t);
    // Windows that spend their quota; a window that does not spend it
    // does not probe.
    int64_t start = 7'061'000;
    for (int i = 0; i < 4; ++i, start += 61'000)
        deliver(w, 3, start);
    start = 7'400'000;
    w.started(d, start);
    EXPECT_FALSE(w.delivery(d, std::nullopt, start, start + 10).change);
    // A full window after the quiet time: its next success probes, and
    // lifts the hold for one more start in this window.
    start = 7'500'000;
    w.started(d, start);
    w.delivery(d, std::nullopt, start, start + 10);
    w.started(d, start + 20);
    w.started(d, start + 21);
    EXPECT_GT(w.core_part(d, start + 21).held_until, 0);
    auto step = w.delivery(d, std::nullopt, start + 20, start + 30);
    ASSERT_TRUE(step.change);
    EXPECT_EQ(step.change->why, Why::probe);
    EXPECT_EQ(step.change->after, 4);
    EXPECT_TRUE(step.core);
    EXPECT_EQ(w.core_part(d, start + 30).held_until, 0);
    // The probe's refusal: back to the window's successes.
    w.delivery(d, std::nullopt, start + 21, start + 40);
    w.started(d, start + 50);
    EXPECT_EQ(w.delivery(d, rate, start + 50, start + 60).change->after, 3);
}

TEST(AdaptiveWindow, ForgetsAfterTheForgetTimeAndLetsIdleDestinationsGo) {
    WindowSettings s = no_probe();
    s.forget_time_ms = 1'000'000;
    AdaptiveWindow w(s);
    int64_t t = 8'000'000;
    learn(w, 4, t);
    w.started("smtp:idle.example", t);
    EXPECT_EQ(w.tracked(), 2u);
    EXPECT_TRUE(w.sweep(t + 100'000).empty());
    EXPECT_EQ(w.tracked(), 1u); // idle for a window with nothing learned
    auto out = w.sweep(t + 10 + 1'000'000);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].why, Why::forget);
    EXPECT_EQ(out[0].before, 4);
    EXPECT_EQ(out[0].after, 0);
    EXPECT_EQ(w.quota(d), 0);
    EXPECT_EQ(w.tracked(), 0u);
    // Restored from an earlier run: counted from when it was learned.
    w.restore(d, 7, t);
    EXPECT_EQ(w.quota(d), 7);
    EXPECT_EQ(w.core_part(d, t).quota, 7);
    EXPECT_EQ(w.sweep(t + 1'000'000).size(), 1u);
}

namespace {

// A receiver that counts each client's messages as Postfix's anvil does
// (a window from the first event after the last one expired, reset once
// its start plus the unit lies before the current second), refusing
// beyond `limit`.
struct Anvil {
    int limit;
    int64_t unit_s;
    int64_t start_s = -1;
    int count = 0;
    // A MAIL at `now_ms`: accepted?
    bool mail(int64_t now_ms) {
        int64_t now = now_ms / 1000;
        if (start_s < 0 || start_s + unit_s < now) {
            start_s = now;
            count = 0;
        }
        return ++count <= limit;
    }
};

struct RunResult {
    int delivered = 0;
    int refused = 0;
    int64_t drain_ms = 0;
};

// `messages` deliveries to one destination, at most `agents` at once, each
// taking `takes_ms` with its MAIL `mail_ms` after its start, against
// `anvil`; the daemon's part played as adaptive.cpp and the core do it:
// the hold and the concurrency of 1 from core_part(), a refused message
// tried again after `retry_ms`.
RunResult run(AdaptiveWindow& w, Anvil anvil, int messages, int agents, int64_t takes_ms,
              int64_t mail_ms, int64_t retry_ms) {
    struct Flight {
        int64_t start, mail, end;
        bool ok = false;
    };
    std::deque<int64_t> ready(static_cast<size_t>(messages), 0); // when each may go
    std::vector<Flight> flights;
    RunResult r;
    const int64_t t0 = 10'000'300;
    for (int64_t now = t0; r.delivered < messages && now < t0 + 3'600'000; now += 1) {
        // Ends first, in start order.
        for (auto it = flights.begin(); it != flights.end();) {
            if (it->mail == now) it->ok = anvil.mail(now);
            if (it->end != now) {
                ++it;
                continue;
            }
            w.delivery(d, it->ok ? std::nullopt : std::optional(rate), it->start, now);
            if (it->ok) {
                r.delivered++;
                r.drain_ms = now - t0;
            } else {
                r.refused++;
                ready.push_back(now + retry_ms);
                std::sort(ready.begin(), ready.end());
            }
            it = flights.erase(it);
        }
        for (;;) {
            auto part = w.core_part(d, now);
            int cap = part.concurrency > 0 ? std::min(agents, part.concurrency) : agents;
            if (part.held_until > 0 || static_cast<int>(flights.size()) >= cap || ready.empty() ||
                ready.front() > now)
                break;
            ready.pop_front();
            w.started(d, now);
            flights.push_back({now, now + mail_ms, now + takes_ms});
        }
    }
    return r;
}

} // namespace

TEST(AdaptiveWindow, LearnsAnAnvilLimitWithFewRefusalsAndFiveWindows) {
    // 300 messages, 60 a minute, 20 agents: the first window's deliveries
    // in flight at the first refusal are the cost; the drain is four
    // windows of 61 s (the first from 0.3 s into its second) and the last
    // burst.  A receiver that takes most of a second to see the MAIL (a
    // loaded machine) costs nothing more: each window counts from the
    // first end of a delivery that reached it.
    struct Case {
        int64_t mail_ms, takes_ms, drain_max_ms;
    };
    for (Case c : {Case{5, 50, 244'500}, Case{20, 50, 244'500}, Case{45, 50, 244'500},
                   Case{700, 900, 248'500}}) {
        AdaptiveWindow w(no_probe());
        RunResult r = run(w, Anvil{60, 60}, 300, 20, c.takes_ms, c.mail_ms, 15'000);
        EXPECT_EQ(r.delivered, 300) << c.mail_ms;
        EXPECT_LE(r.refused, 20) << c.mail_ms;
        EXPECT_EQ(w.quota(d), 60) << c.mail_ms;
        EXPECT_GE(r.drain_ms, 243'700) << c.mail_ms;
        EXPECT_LE(r.drain_ms, c.drain_max_ms) << c.mail_ms;
    }
}
