// The arithmetic of explain: which line binds, and the effective values.
#include "explain_limits.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::qmgr;
using Bound = LimitLine::Bound;

namespace {

LimitLine line(Bound b, double v, std::string source, bool in_force = true) {
    return LimitLine{b, v, std::move(source), "", in_force, false};
}

// The sources of the lines that bind.
std::vector<std::string> binding(const std::vector<LimitLine>& lines) {
    std::vector<std::string> out;
    for (const LimitLine& l : lines)
        if (l.binds) out.push_back(l.source);
    return out;
}

} // namespace

TEST(ExplainLimits, TheSmallestConcurrencyBinds) {
    std::vector<LimitLine> lines{
        line(Bound::concurrency, 3, "share"), line(Bound::concurrency, 1, "admin"),
        line(Bound::concurrency, 20, "main.cf"), line(Bound::concurrency, 5, "window")};
    EffectiveLimits e = bind_limits(lines);
    EXPECT_EQ(e.concurrency, 1);
    EXPECT_EQ(e.concurrency_line, 1u);
    EXPECT_FALSE(e.rate);
    EXPECT_EQ(binding(lines), std::vector<std::string>{"admin"});
}

TEST(ExplainLimits, AmongEqualsTheFirstListedBinds) {
    // An administrator's cap at the window's value: the cap, listed before
    // the window, is what holds the destination there.
    std::vector<LimitLine> lines{line(Bound::concurrency, 5, "admin"),
                                 line(Bound::concurrency, 5, "window")};
    bind_limits(lines);
    EXPECT_EQ(binding(lines), std::vector<std::string>{"admin"});
}

TEST(ExplainLimits, ALineNotInForceNeverBinds) {
    // A share while no other destination waits.
    std::vector<LimitLine> lines{line(Bound::concurrency, 2, "share", false),
                                 line(Bound::concurrency, 5, "window")};
    EffectiveLimits e = bind_limits(lines);
    EXPECT_EQ(e.concurrency, 5);
    EXPECT_EQ(binding(lines), std::vector<std::string>{"window"});
}

TEST(ExplainLimits, AStopBindsWhateverItsValue) {
    std::vector<LimitLine> lines{line(Bound::concurrency, 1, "admin"), line(Bound::stop, 7, "dead"),
                                 line(Bound::concurrency, 0, "window")};
    EffectiveLimits e = bind_limits(lines);
    EXPECT_EQ(e.concurrency, 0);
    // The dead queue's window is 0 too; the stop, listed first, binds.
    EXPECT_EQ(binding(lines), std::vector<std::string>{"dead"});
}

TEST(ExplainLimits, TheSlowestRateBindsApartFromConcurrency) {
    std::vector<LimitLine> lines{
        line(Bound::rate, 0.5, "cluster"), line(Bound::concurrency, 4, "window"),
        line(Bound::rate, 0.2, "main.cf"), line(Bound::rate, 0.01, "learned", false)};
    EffectiveLimits e = bind_limits(lines);
    EXPECT_EQ(e.concurrency, 4);
    ASSERT_TRUE(e.rate);
    EXPECT_DOUBLE_EQ(*e.rate, 0.2);
    EXPECT_EQ(binding(lines), (std::vector<std::string>{"window", "main.cf"}));
}

TEST(ExplainLimits, MarksAreWorkedOutAfresh) {
    std::vector<LimitLine> lines{line(Bound::concurrency, 2, "a"),
                                 line(Bound::concurrency, 1, "b")};
    lines[0].binds = true;
    bind_limits(lines);
    EXPECT_EQ(binding(lines), std::vector<std::string>{"b"});
}

TEST(ExplainLimits, NoLinesIsUnbounded) {
    std::vector<LimitLine> none;
    EffectiveLimits e = bind_limits(none, 42);
    EXPECT_EQ(e.concurrency, 42);
    EXPECT_FALSE(e.concurrency_line);
    EXPECT_FALSE(e.rate);
}

TEST(ExplainLimits, RatesInWords) {
    EXPECT_EQ(rate_text(0.2), "1/5s");
    EXPECT_EQ(rate_text(1.0 / 60), "1/60s");
    EXPECT_EQ(rate_text(12), "12/s");
    EXPECT_EQ(rate_text(50.0), "50/s");
    EXPECT_EQ(rate_text(0.4), "0.4/s");
    EXPECT_EQ(rate_text(2.5), "2.5/s");
    EXPECT_EQ(rate_text(0), "0/s");
}
