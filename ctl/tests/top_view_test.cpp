#include "samples.hpp"
#include "table.hpp"
#include "top_view.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::ctl;
using cqmgr::ctl::test::sample;

namespace {

constexpr int64_t now = 1764000000;

// The summary sample `seconds` later with `done` and `deferred` added.
json later(double seconds, int done, int deferred) {
    json s = sample("summary");
    s["uptime"] = s["uptime"].get<double>() + seconds;
    s["counters"]["deliveries"]["done"] = s["counters"]["deliveries"]["done"].get<int>() + done;
    s["counters"]["deliveries"]["deferred"] =
        s["counters"]["deliveries"]["deferred"].get<int>() + deferred;
    return s;
}

// A queues reply with `n` destinations on smtp, destination i having i
// messages to do; the last one is dead.
json many_queues(int n) {
    json queues = json::array();
    for (int i = 1; i <= n; ++i) {
        json q = {{"name", "d" + std::to_string(i) + ".example"},
                  {"window", 5},
                  {"busy", 0},
                  {"todo", i},
                  {"dead", nullptr},
                  {"suspended", nullptr}};
        if (i == n) q["dead"] = {{"status", "4.4.1"}, {"reason", "refused"}, {"until", now + 60}};
        queues.push_back(q);
    }
    json transport = {{"name", "smtp"}, {"queues", queues}};
    return {{"ok", true}, {"transports", json::array({transport})}};
}

bool has_line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
    for (const auto& l : lines)
        if (l.rfind(prefix, 0) == 0) return true;
    return false;
}

} // namespace

TEST(TopRates, FromTheDaemonsUptime) {
    auto r = top_rates(sample("summary"), later(2, 10, 3), 99);
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->deliveries, 6.5); // 13 ends in 2 s
    EXPECT_DOUBLE_EQ(r->deferrals, 1.5);
}

TEST(TopRates, ClientClockWithoutUptime) {
    json a = sample("summary"), b = later(0, 4, 0);
    a.erase("uptime");
    b.erase("uptime");
    auto r = top_rates(a, b, 2);
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->deliveries, 2);
    EXPECT_DOUBLE_EQ(r->deferrals, 0);
}

TEST(TopRates, NoneAcrossARestartOrWithoutCounters) {
    EXPECT_FALSE(top_rates(later(5, 0, 0), sample("summary"), 1));
    EXPECT_FALSE(top_rates(later(0, 5, 0), later(1, 0, 0), 1)); // counters went back
    EXPECT_FALSE(top_rates(json::object(), sample("summary"), 1));
}

TEST(TopView, SampleFrame) {
    const json s = later(1, 12, 1), q = sample("queues");
    TopInput in;
    in.summary = &s;
    in.queues = &q;
    in.rates = TopRates{12, 0.5};
    in.socket = "/var/spool/postfix/private/cqmgr";
    in.now = now;
    in.cols = 120;
    in.rows = 40;
    const auto lines = render_top(in);
    ASSERT_GE(lines.size(), 9u);
    EXPECT_EQ(lines[0], "cqmgrctl top - 16:00:00Z - /var/spool/postfix/private/cqmgr - cqmgr "
                        "0.1.0 pid 28691 up 5.6s");
    EXPECT_EQ(lines[1], "active: 6 messages, 6 recipients, oldest 3s; 1 deliveries in flight; "
                        "3 transports, 2 queues");
    EXPECT_EQ(lines[2], "deliveries/s 12.0  deferrals/s 0.5  since start: 15 done, 3 deferred, "
                        "0 crashed, 0 unavailable");
    EXPECT_EQ(lines[3], "feed: idle, 111 in-flow tokens written; messages: 3 "
                        "removed, 2 deferred, 0 bounced, 0 expired");
    EXPECT_EQ(lines[4], "");
    EXPECT_EQ(lines[5], "TRANSPORT  DESTINATION  WINDOW  BUSY  TODO  LAST   STATE");
    EXPECT_EQ(lines[6], "smtp       example.com       5     3     5  4.4.1  dead, suspended, "
                        "throttle 2");
    EXPECT_EQ(lines[7], "");
    EXPECT_EQ(lines[8], "DEAD OR SUSPENDED");
    EXPECT_TRUE(has_line_starting(lines, "smtp:example.com  dead "));
    EXPECT_TRUE(has_line_starting(lines, "smtp:example.com  suspended "));
    // Throttles are in the STATE column, not among the dead and suspended.
    EXPECT_FALSE(has_line_starting(lines, "smtp:example.com  throttle"));
}

TEST(TopView, NoRatesBeforeTheSecondPollAndAStatus) {
    const json s = sample("summary"), q = sample("queues");
    TopInput in;
    in.summary = &s;
    in.queues = &q;
    in.status = "cannot connect; retrying";
    const auto lines = render_top(in);
    EXPECT_EQ(lines[2].rfind("deliveries/s -  deferrals/s -  ", 0), 0u) << lines[2];
    EXPECT_EQ(lines[4], "cannot connect; retrying");
}

TEST(TopView, BusiestFirstAndFitsTheScreen) {
    const json s = sample("summary"), q = many_queues(50);
    TopInput in;
    in.summary = &s;
    in.queues = &q;
    in.now = now;
    in.cols = 40;
    in.rows = 20;
    const auto lines = render_top(in);
    ASSERT_EQ(lines.size(), 20u);
    for (const auto& l : lines)
        EXPECT_LE(display_width(l), 40u) << l;
    EXPECT_EQ(lines[6].rfind("smtp       d50.example", 0), 0u) << lines[6];
    EXPECT_EQ(lines[7].rfind("smtp       d49.example", 0), 0u) << lines[7];
    EXPECT_TRUE(has_line_starting(lines, "... "));
    EXPECT_TRUE(has_line_starting(lines, "DEAD OR SUSPENDED"));
    EXPECT_TRUE(has_line_starting(lines, "smtp:d50.example  dead"));
}

TEST(TopView, IdleAndTinyScreens) {
    const json s = sample("summary");
    const json q = json::parse(R"({"ok":true,"transports":[{"name":"smtp","queues":[]}]})");
    TopInput in;
    in.summary = &s;
    in.queues = &q;
    auto lines = render_top(in);
    EXPECT_EQ(lines.back(), "no mail waiting for a destination");
    in.rows = 2;
    in.cols = 10;
    lines = render_top(in);
    EXPECT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], "cqmgrctl t");
    in.summary = nullptr;
    in.queues = nullptr;
    in.rows = 24;
    EXPECT_NO_THROW(render_top(in));
}
