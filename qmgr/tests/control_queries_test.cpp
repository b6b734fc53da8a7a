// The control socket's query replies, built from a real scheduler core
// driven by the core tests' scripted driver, and the dispatch of request
// lines.  Also a by-hand benchmark of the summary and queues replies with
// 20,000 messages over 1,000 destinations (disabled by default: run with
// --gtest_also_run_disabled_tests --gtest_filter='*Bench*').
#include "admin_state.hpp"
#include "control_commands.hpp"
#include "control_dispatch.hpp"
#include "control_fixture.hpp"
#include "control_queries.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <map>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using Json = control::Json;

namespace {

struct Queries : cqmgr::qmgr::test::ControlFixture {
    FeedState feed{false, {"incoming"}, {}};
    std::unique_ptr<ControlQueries> queries;
    // The commands, for the dispatch: nothing kept (every reply has a
    // warning), log lines collected, a flush of "boom" throws.
    AdminState kept;
    std::vector<std::string> command_lines;
    std::unique_ptr<ControlCommands> commands;

    void make() {
        make_core();
        queries = std::make_unique<ControlQueries>(
            ControlSources{*sched, messages, arrivals, *record, counters, clock,
                           [this] { return feed; }, 20000, 20000},
            ControlIdentity{123, "cqmgr test", {990, 500000}});
        commands = std::make_unique<ControlCommands>(
            *sched, kept, clock,
            [](const std::string& site) {
                if (site == "boom") throw std::runtime_error("boom");
                return ControlCommands::FlushDeferred::not_eligible;
            },
            [this](const std::string& l) { command_lines.push_back(l); });
    }
    ControlDispatch dispatch() const { return ControlDispatch(*queries, *commands); }
    void SetUp() override { make(); }

    // The reply as a parsed object, to compare field by field.
    static nlohmann::json parsed(const Json& j) {
        return nlohmann::json::parse(control::reply_line(j));
    }
};

} // namespace

TEST_F(Queries, SummaryCountsTheActiveQueue) {
    add("A", 3, "a.example", "smtp", 900);
    add("B", 2, "b.example", "relay", 950);
    clock.t = {1000, 250000};
    using R = Counters::Result;
    counters.deliveries_by_class["smtp"][size_t(R::done)][2] = 3;
    counters.deliveries_by_class["relay"][size_t(R::done)][0] = 1;
    counters.deliveries_by_class["relay"][size_t(R::deferred)][4] = 2;
    counters.messages_removed = 7;
    counters.resolver_requests = 40;
    counters.resolver_cache_hits = 4;
    counters.in_flow_tokens = 9;
    feed = {true, {"incoming", "deferred"}, {}};
    send();

    auto j = parsed(queries->summary());
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["pid"], 123);
    EXPECT_EQ(j["version"], "cqmgr test");
    EXPECT_DOUBLE_EQ(j["uptime"].get<double>(), 9.75);
    EXPECT_EQ(j["active"]["messages"], 2);
    EXPECT_EQ(j["active"]["recipients"], 5);
    EXPECT_EQ(j["active"]["message_limit"], 20000);
    EXPECT_EQ(j["active"]["recipient_limit"], 20000);
    EXPECT_DOUBLE_EQ(j["active"]["oldest_age"].get<double>(), 100.25);
    EXPECT_EQ(j["feed"]["paused"], true);
    EXPECT_EQ(j["feed"]["scanning"], (nlohmann::json{"incoming", "deferred"}));
    EXPECT_EQ(j["feed"]["in_flow_tokens_written"], 9);
    EXPECT_EQ(j["resolver"]["requests"], 40);
    EXPECT_EQ(j["resolver"]["cache_hits"], 4);
    EXPECT_EQ(j["transports"], 2);
    EXPECT_EQ(j["queues"], 2);
    EXPECT_EQ(j["deliveries_in_flight"], 1);
    EXPECT_EQ(j["counters"]["deliveries"],
              (nlohmann::json{{"done", 4}, {"deferred", 2}, {"crashed", 0}, {"unavailable", 0}}));
    EXPECT_EQ(j["counters"]["dsn_class"], (nlohmann::json{{"2", 3}, {"4", 2}, {"5", 0}}));
    EXPECT_EQ(j["counters"]["destination_failures"], (nlohmann::json{{"4", 2}, {"5", 0}}));
    EXPECT_EQ(j["counters"]["messages"]["removed"], 7);
}

// The queue directories' sizes and oldest ages, as the feed gives them;
// null where not known (no census yet, no birth times).
TEST_F(Queries, SummaryShowsTheMailQueues) {
    MetricsSnapshot::Queue incoming{0, 0, true}, active{2, 12.3456, true}, deferred{40, 0, false};
    feed.queues = {incoming, active, deferred};
    auto j = parsed(queries->summary());
    EXPECT_EQ(j["mail_queues"]["incoming"], (nlohmann::json{{"messages", 0}, {"oldest_age", 0}}));
    EXPECT_EQ(j["mail_queues"]["active"]["messages"], 2);
    EXPECT_DOUBLE_EQ(j["mail_queues"]["active"]["oldest_age"].get<double>(), 12.346);
    EXPECT_EQ(j["mail_queues"]["deferred"]["messages"], 40);
    EXPECT_TRUE(j["mail_queues"]["deferred"]["oldest_age"].is_null());
    feed.queues[0].reset();
    j = parsed(queries->summary());
    EXPECT_TRUE(j["mail_queues"]["incoming"]["messages"].is_null());
    EXPECT_TRUE(j["mail_queues"]["incoming"]["oldest_age"].is_null());
}

TEST_F(Queries, SummaryOfAnEmptyQueue) {
    auto j = parsed(queries->summary());
    EXPECT_EQ(j["active"]["messages"], 0);
    EXPECT_TRUE(j["active"]["oldest_age"].is_null());
    EXPECT_EQ(j["transports"], 0);
}

TEST_F(Queries, QueuesShowWindowsBusyAndTodo) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 2;
    make();
    add("A", 4, "a.example");
    add("B", 1, "b.example");
    add("C", 1, "c.example", "relay");
    send();
    send();

    auto j = parsed(queries->queues(""));
    ASSERT_EQ(j["transports"].size(), 2u);
    auto relay = j["transports"][0];
    auto smtp = j["transports"][1];
    EXPECT_EQ(relay["name"], "relay");
    EXPECT_EQ(smtp["name"], "smtp");
    EXPECT_TRUE(smtp["dead"].is_null());
    EXPECT_TRUE(smtp["suspended"].is_null());
    EXPECT_EQ(smtp["busy"], 2);
    EXPECT_EQ(smtp["todo"], 3);
    EXPECT_EQ(smtp["rate_locked"], false);
    ASSERT_EQ(smtp["queues"].size(), 2u);
    auto a = smtp["queues"][0];
    EXPECT_EQ(a["name"], "a.example");
    EXPECT_EQ(a["nexthop"], "a.example");
    EXPECT_EQ(a["window"], 2);
    EXPECT_EQ(a["busy"], 2);
    EXPECT_EQ(a["todo"], 2);
    EXPECT_TRUE(a["dead"].is_null());
    EXPECT_TRUE(a["throttle"].is_null());
    EXPECT_TRUE(a["last_dsn"].is_null());
    EXPECT_EQ(a["rate_delay"],
              (nlohmann::json{{"seconds", 0}, {"waiting", false}, {"until", nullptr}}));
    EXPECT_EQ(smtp["queues"][1]["name"], "b.example");

    auto only = parsed(queries->queues("relay"));
    ASSERT_EQ(only["transports"].size(), 1u);
    EXPECT_EQ(only["transports"][0]["name"], "relay");
    EXPECT_EQ(parsed(queries->queues("nosuch"))["transports"].size(), 0u);
}

TEST_F(Queries, ADeadDestinationShowsStocksReason) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 1;
    tc.fail_cohort_limit = 1;
    make();
    add("A", 3, "down.example");
    clock.t = {1005, 0};
    reply(send(), 4, {"4.4.1", "connect to down.example[192.0.2.1]:25: Connection refused"});

    auto j = parsed(queries->queues("smtp"));
    auto q = j["transports"][0]["queues"][0];
    EXPECT_EQ(q["name"], "down.example");
    EXPECT_EQ(q["window"], 0);
    EXPECT_EQ(q["dead"]["status"], "4.4.1");
    EXPECT_EQ(q["dead"]["reason"], "delivery temporarily suspended: connect to "
                                   "down.example[192.0.2.1]:25: Connection refused");
    EXPECT_EQ(q["dead"]["until"], 1000 + 300);
    EXPECT_EQ(q["last_dsn"]["status"], "4.4.1");
    EXPECT_EQ(q["last_dsn"]["reason"], "connect to down.example[192.0.2.1]:25: Connection refused");
    EXPECT_EQ(q["last_dsn"]["when"], 1005);
    EXPECT_GE(q["cohort"]["fail_cohorts"].get<double>(), 1.0);

    // Its waiting recipients went to retry, in a queue named by the reason.
    auto retry = parsed(queries->queues("retry"))["transports"][0]["queues"][0];
    EXPECT_EQ(retry["name"], "4.4.1 delivery temporarily suspended: connect to "
                             "down.example[192.0.2.1]:25: Connection refused");
    EXPECT_EQ(retry["todo"], 2); // the two recipients that waited, one per entry
}

TEST_F(Queries, QueuesShowTheAdministratorsSettings) {
    add("A", 1, "a.example");
    add("B", 1, "b.example");
    ASSERT_TRUE(sched->set_limit({"smtp", ""},
                                 core::LimitChange::hold(core::AdminHold{0, "all of smtp", 0})));
    ASSERT_TRUE(sched->set_limit({"smtp", "a.example"}, core::LimitChange::hold(core::AdminHold{
                                                            1600, "maintenance", 1000})));
    ASSERT_TRUE(sched->set_limit({"smtp", "a.example"},
                                 core::LimitChange::cap(core::AdminCap{2, 1700, 1000})));
    ASSERT_TRUE(
        sched->set_limit({"", "b.example"}, core::LimitChange::cap(core::AdminCap{1, 0, 0})));
    // The reply as the client sees it, in its field order.
    std::string line = control::reply_line(queries->queues("smtp"));
    EXPECT_NE(line.find(R"("name":"smtp","dead":null,"suspended":{"reason":"all of smtp",)"
                        R"("until":null,"by":0},"busy":0,"todo":2,)"),
              std::string::npos)
        << line;
    EXPECT_NE(line.find(R"("dead":null,"suspended":{"reason":"maintenance","until":1600,)"
                        R"("by":1000},"throttle":{"concurrency":2,"until":1700},"last_dsn")"),
              std::string::npos)
        << line;
    auto j = parsed(queries->queues("smtp"));
    auto b = j["transports"][0]["queues"][1];
    EXPECT_EQ(b["name"], "b.example");
    EXPECT_TRUE(b["suspended"].is_null()); // the transport's is on the transport
    EXPECT_EQ(b["throttle"], (nlohmann::json{{"concurrency", 1}, {"until", nullptr}}));
    ASSERT_TRUE(sched->set_limit({"smtp", ""}, core::LimitChange::hold(std::nullopt)));
    EXPECT_TRUE(parsed(queries->queues("smtp"))["transports"][0]["suspended"].is_null());
}

TEST_F(Queries, QueuesShowAReplyRulesAction) {
    add("A", 1, "a.example");
    add("B", 1, "b.example");
    // A rule's action on the whole transport reaches each queue; without
    // the rules' record (none configured) only what the scheduler holds.
    ASSERT_TRUE(sched->set_limit(
        {"smtp", ""}, core::LimitChange::rule(core::RuleLimit{.concurrency = 2, .until = 1900})));
    auto j = parsed(queries->queues("smtp"));
    auto a = j["transports"][0]["queues"][0];
    EXPECT_EQ(a["rule"]["hold"], false);
    EXPECT_EQ(a["rule"]["concurrency"], 2);
    EXPECT_TRUE(a["rule"]["pause"].is_null());
    EXPECT_EQ(a["rule"]["until"], 1900);
    EXPECT_EQ(a["rule"]["action"], "");
    ASSERT_TRUE(sched->set_limit({"smtp", ""}, core::LimitChange::rule(std::nullopt)));
    EXPECT_TRUE(parsed(queries->queues("smtp"))["transports"][0]["queues"][1]["rule"].is_null());
}

TEST_F(Queries, JobsListThePreemptionState) {
    tc.dest_recipient_limit = 1;
    make();
    add("A", 3, "a.example");
    add("B", 1, "b.example");
    send();
    auto j = parsed(queries->jobs(""));
    ASSERT_EQ(j["transports"].size(), 1u);
    auto jobs = j["transports"][0]["jobs"];
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0]["queue_id"], "A");
    EXPECT_EQ(jobs[0]["current"], true);
    EXPECT_EQ(jobs[0]["stack_level"], 0);
    EXPECT_TRUE(jobs[0]["parent"].is_null());
    EXPECT_EQ(jobs[0]["selected_entries"], 1);
    EXPECT_EQ(jobs[0]["read_entries"], 3);
    EXPECT_EQ(jobs[0]["rcpt_count"], 3);
    EXPECT_EQ(jobs[0]["rcpt_unread"], 0);
    EXPECT_EQ(jobs[0]["blocker"], false);
    EXPECT_EQ(jobs[0]["peers"], 1);
    EXPECT_EQ(jobs[1]["queue_id"], "B");
    EXPECT_EQ(jobs[1]["current"], false);
    EXPECT_EQ(j["transports"][0]["jobs_total"], 2);
    EXPECT_EQ(parsed(queries->jobs("relay"))["transports"].size(), 0u);
}

TEST_F(Queries, JobsListsTheHeadOfALongJobList) {
    make();
    for (int i = 0; i < 600; ++i)
        add("M" + std::to_string(i), 1, "d" + std::to_string(i % 10) + ".example");
    auto t = parsed(queries->jobs(""))["transports"][0];
    EXPECT_EQ(t["jobs"].size(), 500u);
    EXPECT_EQ(t["jobs_total"], 600);
    EXPECT_EQ(t["jobs"][0]["queue_id"], "M0");
}

TEST_F(Queries, MessageShowsWhereEachRecipientIs) {
    tc.dest_recipient_limit = 2;
    make();
    Message& m = add("A", 3, "a.example");
    add("B", 1, "a.example");
    send();
    auto j = parsed(queries->message("A"));
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["queue_id"], "A");
    EXPECT_EQ(j["phase"], "waiting");
    EXPECT_EQ(j["queued"], 900);
    EXPECT_EQ(j["active_since"], 910);
    EXPECT_EQ(j["recipients_in_core"], 3);
    EXPECT_EQ(j["recipients_unread"], 0);
    ASSERT_EQ(j["entries"].size(), 2u);
    EXPECT_EQ(j["entries"][0]["state"], "waiting");
    EXPECT_EQ(j["entries"][0]["recipients"], (nlohmann::json{"A-2@a.example"}));
    EXPECT_EQ(j["entries"][1]["state"], "busy");
    EXPECT_EQ(j["entries"][1]["transport"], "smtp");
    EXPECT_EQ(j["entries"][1]["queue"], "a.example");
    EXPECT_EQ(j["entries"][1]["recipients"], (nlohmann::json{"A-0@a.example", "A-1@a.example"}));
    (void)m;

    auto none = parsed(queries->message("NOPE"));
    EXPECT_EQ(none,
              (nlohmann::json{{"ok", false}, {"error", "no such message in the active queue"}}));
}

TEST_F(Queries, DeliveriesInFlightWithTheirAge) {
    tc.dest_recipient_limit = 1;
    make();
    add("A", 2, "a.example");
    add("B", 1, "b.example", "relay");
    clock.t = {1000, 0};
    core::Entry* first = send();
    clock.t = {1001, 500000};
    send("relay");
    clock.t = {1002, 0};
    auto j = parsed(queries->deliveries());
    ASSERT_EQ(j["deliveries"].size(), 2u);
    EXPECT_EQ(j["deliveries"][0], (nlohmann::json{{"transport", "smtp"},
                                                  {"queue", "a.example"},
                                                  {"queue_id", "A"},
                                                  {"recipients", 1},
                                                  {"age", 2.0}}));
    EXPECT_EQ(j["deliveries"][1]["transport"], "relay");
    EXPECT_DOUBLE_EQ(j["deliveries"][1]["age"].get<double>(), 0.5);
    reply(first, 0);
    EXPECT_EQ(parsed(queries->deliveries())["deliveries"].size(), 1u);
}

TEST_F(Queries, DispatchAnswersQueriesAndHandsOnCommands) {
    ControlDispatch d = dispatch();
    const std::vector<std::string>& lines = command_lines;
    auto reply = [&](std::string_view line, uid_t uid = 0) {
        std::string s = d.answer(line, uid);
        EXPECT_EQ(s.back(), '\n');
        EXPECT_EQ(s.find('\n'), s.size() - 1);
        return nlohmann::json::parse(s);
    };
    EXPECT_EQ(reply("summary")["ok"], true);
    EXPECT_EQ(reply("help")["requests"].size(), 13u);
    EXPECT_EQ(reply("frob"),
              (nlohmann::json{{"ok", false}, {"error", "unknown request: frob (try help)"}}));
    EXPECT_TRUE(lines.empty());

    auto r = reply("suspend smtp:x for 1h", 42);
    EXPECT_EQ(r["ok"], true);
    EXPECT_EQ(r["changed"][0]["target"], "smtp:x");
    EXPECT_EQ(lines, std::vector<std::string>{"control: suspend smtp:x until 1970-01-01T01:16:40Z "
                                              "(3600s) by uid 42"});
    EXPECT_EQ(reply("flush smtp:boom"),
              (nlohmann::json{{"ok", false}, {"error", "internal error: boom"}}));
}

TEST_F(Queries, RepliesSurviveBytesThatAreNotUtf8) {
    tc.init_dest_concurrency = 1;
    make();
    add("A", 2, "a.example");
    reply(send(), 4, {"4.7.0", "421 \xff\xfe greeting"});
    ControlDispatch d = dispatch();
    auto j = nlohmann::json::parse(d.answer("queues smtp", 0));
    EXPECT_EQ(j["transports"][0]["queues"][0]["last_dsn"]["reason"],
              "421 \xef\xbf\xbd\xef\xbf\xbd greeting");
}

// By hand: the cost of one summary and one queues reply (built and
// serialised, as the server sends it) with 20,000 active messages over
// 1,000 destinations.  No timing assertion: it prints what it measured.
TEST_F(Queries, DISABLED_BenchSummaryAndQueues) {
    tc.dest_recipient_limit = 50;
    tc.init_dest_concurrency = 5;
    make();
    for (int i = 0; i < 20000; ++i) {
        std::string id = "M" + std::to_string(i);
        add(id, 1 + i % 3, "d" + std::to_string(i % 1000) + ".example", i % 10 ? "smtp" : "relay",
            900 - i % 500);
    }
    for (int i = 0; i < 2000; ++i)
        if (!send(i % 2 ? "smtp" : "relay")) break;
    ControlDispatch d = dispatch();
    for (const char* line : {"summary", "queues", "jobs", "deliveries"}) {
        using C = std::chrono::steady_clock;
        size_t bytes = 0;
        double best = 1e9;
        for (int round = 0; round < 20; ++round) {
            auto t0 = C::now();
            bytes = d.answer(line, 0).size();
            best = std::min(best, std::chrono::duration<double, std::milli>(C::now() - t0).count());
        }
        std::printf("%-10s %8zu bytes  best of 20: %.3f ms\n", line, bytes, best);
    }
}
