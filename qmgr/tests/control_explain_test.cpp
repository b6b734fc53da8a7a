// The explain reply, built from a real scheduler core driven by the core
// tests' scripted driver: every limit with its source, which binds, and
// what waits; and, over random limits, that its effective concurrency is
// the window selection uses.
#include "control_fixture.hpp"
#include "control_queries.hpp"
#include "deferred_index.hpp"
#include "explain_features.hpp"
#include "reply_actions.hpp"

#include <gtest/gtest.h>
#include <map>
#include <random>

using namespace cqmgr;
using namespace cqmgr::qmgr;

namespace {

struct Explain : cqmgr::qmgr::test::ControlFixture {
    std::unique_ptr<ControlSources> src;

    void make() {
        make_core();
        src = std::make_unique<ControlSources>(
            ControlSources{*sched, messages, arrivals, *record, counters, clock, {}, 20000, 20000});
    }
    void SetUp() override {
        tc.dest_recipient_limit = 1; // one entry per recipient
        tc.process_limit = 10;
        tc.dest_share = 30; // 3 agents
        make();
    }
    // The reply to `explain what`, parsed as the client sees it.
    nlohmann::json explain(const std::string& what) {
        control::Parsed p = control::parse_request("explain " + what);
        EXPECT_TRUE(p.ok()) << p.error;
        return nlohmann::json::parse(control::reply_line(explain_reply(*src, *p.request->target)));
    }
    // The limit line of `q` from `source` whose detail has `words`.
    static nlohmann::json line(const nlohmann::json& q, const std::string& source,
                               const std::string& words = "") {
        for (const auto& l : q["limits"])
            if (l["source"] == source &&
                l["detail"].get<std::string>().find(words) != std::string::npos)
                return l;
        return nullptr;
    }
    // The sources of the lines that bind.
    static std::vector<std::string> binding(const nlohmann::json& q) {
        std::vector<std::string> out;
        for (const auto& l : q["limits"])
            if (l["binds"] == true) out.push_back(l["source"]);
        return out;
    }
};

} // namespace

TEST_F(Explain, AThrottleAndAShareAreBothShownAndTheThrottleBinds) {
    add("A", 6, "a.example");
    add("B", 6, "b.example");
    ASSERT_TRUE(
        sched->set_limit({"smtp", "a.example"}, core::LimitChange::cap(core::AdminCap{1, 0, 0})));
    auto j = explain("smtp:a.example");
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["target"], "smtp:a.example");
    EXPECT_TRUE(j["provider"].is_null());
    ASSERT_EQ(j["queues"].size(), 1u) << j.dump();
    auto q = j["queues"][0];
    EXPECT_EQ(q["transport"], "smtp");
    EXPECT_EQ(q["destination"], "a.example");
    EXPECT_EQ(q["effective"]["concurrency"], 1);
    EXPECT_TRUE(q["effective"]["rate"].is_null());
    auto admin = line(q, "admin");
    EXPECT_EQ(admin["bound"], "concurrency");
    EXPECT_EQ(admin["value"], 1);
    EXPECT_EQ(admin["detail"], "throttle smtp:a.example by uid 0 until cqmgrctl unthrottle");
    EXPECT_EQ(admin["binds"], true);
    // b.example waits for an agent: the share is in force, and does not bind.
    auto share = line(q, "share");
    EXPECT_EQ(share["value"], 3);
    EXPECT_EQ(share["in_force"], true);
    EXPECT_EQ(share["binds"], false);
    EXPECT_NE(share["detail"].get<std::string>().find(
                  "cqmgr_destination_agent_share = 30% of the process limit 10: 3 agents"),
              std::string::npos)
        << share.dump();
    EXPECT_EQ(line(q, "main.cf", "_destination_concurrency_limit")["value"], 20);
    EXPECT_EQ(line(q, "main.cf", "window")["value"], 5);
    EXPECT_EQ(binding(q), std::vector<std::string>{"admin"});
    EXPECT_EQ(q["waiting"]["messages"], 1);
    EXPECT_EQ(q["waiting"]["recipients"], 6);
    EXPECT_EQ(q["waiting"]["in_flight"], 0);
    EXPECT_TRUE(q["last_deferral"].is_null());
    EXPECT_EQ(q["next_retry"]["when"], 1000);
    EXPECT_TRUE(q["deferred"]["messages"].is_null());
}

TEST_F(Explain, TheShareBindsOnlyWhileAnotherDestinationWaits) {
    add("A", 6, "a.example");
    for (int i = 0; i < 3; ++i)
        ASSERT_NE(send(), nullptr);
    auto q = explain("a.example")["queues"][0];
    // Alone, a.example may go up to its window.
    EXPECT_EQ(q["effective"]["concurrency"], 5);
    EXPECT_EQ(line(q, "share")["in_force"], false);
    EXPECT_NE(line(q, "share")["detail"].get<std::string>().find("not in force"),
              std::string::npos);
    EXPECT_EQ(binding(q), std::vector<std::string>{"main.cf"});
    EXPECT_EQ(q["waiting"]["in_flight"], 3);
    EXPECT_EQ(q["waiting"]["recipients"], 3);

    add("B", 2, "b.example");
    q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 3);
    EXPECT_EQ(binding(q), std::vector<std::string>{"share"});
    EXPECT_EQ(q["next_retry"]["what"],
              "when a delivery in flight ends (3 in flight, 3 at once allowed)");
    EXPECT_TRUE(q["next_retry"]["when"].is_null());
}

// A throttled destination alone on its transport, its one delivery in
// flight: its mail waits for that delivery, not for an agent.
TEST_F(Explain, AFullWindowWaitsForADeliveryToEnd) {
    add("A", 3, "a.example");
    ASSERT_TRUE(
        sched->set_limit({"", "a.example"}, core::LimitChange::cap(core::AdminCap{1, 0, 0})));
    ASSERT_NE(send(), nullptr);
    auto q = explain("a.example")["queues"][0];
    EXPECT_TRUE(q["next_retry"]["when"].is_null()) << q.dump();
    EXPECT_EQ(q["next_retry"]["what"],
              "when a delivery in flight ends (1 in flight, 1 at once allowed)");
}

TEST_F(Explain, ADeadDestinationStopsWithItsReasonAndRevival) {
    tc.fail_cohort_limit = 1;
    tc.init_dest_concurrency = 1;
    make();
    add("A", 3, "down.example");
    clock.t = {1005, 0};
    sched->set_time(1005);
    reply(send(), 4, {"4.4.1", "connect to down.example[192.0.2.1]:25: Connection refused"});
    auto q = explain("smtp:down.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 0);
    EXPECT_EQ(binding(q), std::vector<std::string>{"dead"});
    EXPECT_EQ(line(q, "dead")["bound"], "stop");
    EXPECT_NE(line(q, "dead")["detail"].get<std::string>().find("4.4.1 delivery temporarily "
                                                                "suspended: connect to"),
              std::string::npos);
    EXPECT_EQ(q["last_deferral"]["status"], "4.4.1");
    EXPECT_EQ(q["last_deferral"]["when"], 1005);
    EXPECT_EQ(q["next_retry"]["when"], 1005 + 300);
}

TEST_F(Explain, LearnedLimitsAndRateDelays) {
    tc.dest_rate_delay = 0;
    add("A", 2, "a.example");
    ASSERT_TRUE(sched->set_limit({"smtp", "a.example"},
                                 core::LimitChange::learned(core::LearnedLimit{2, 0})));
    auto q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 2);
    EXPECT_EQ(binding(q), std::vector<std::string>{"learned"});

    ASSERT_TRUE(sched->set_limit({"smtp", "a.example"},
                                 core::LimitChange::learned(core::LearnedLimit{0, 5})));
    q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 1);
    EXPECT_EQ(q["effective"]["rate"], "1/5s");
    EXPECT_EQ(line(q, "learned", "after each delivery")["value"], "1/5s");
    EXPECT_EQ(binding(q), (std::vector<std::string>{"learned", "learned"}));
}

// The window model's quota: a rate line, and a stop while it is spent.
TEST_F(Explain, ALearnedWindowQuotaAndItsHold) {
    tc.dest_rate_delay = 0;
    add("A", 2, "a.example");
    ASSERT_TRUE(sched->set_limit({"smtp", "a.example"},
                                 core::LimitChange::learned(core::LearnedLimit{0, 0, 60, 60})));
    auto q = explain("a.example")["queues"][0];
    auto quota = line(q, "learned", "a quota of 60 deliveries per 60s window");
    EXPECT_EQ(quota["bound"], "rate");
    EXPECT_EQ(q["effective"]["rate"], "1/s");
    EXPECT_TRUE(line(q, "learned", "held until").is_null());
    ASSERT_TRUE(sched->set_limit(
        {"smtp", "a.example"}, core::LimitChange::learned(core::LearnedLimit{0, 0, 60, 60, 1042})));
    q = explain("a.example")["queues"][0];
    auto held = line(q, "learned", "the window's quota is spent: held until");
    EXPECT_EQ(held["bound"], "stop");
    EXPECT_EQ(held["binds"], true);
}

TEST_F(Explain, MainCfRateDelays) {
    tc.dest_rate_delay = 10;
    tc.transport_rate_delay = 2;
    make();
    add("A", 2, "a.example");
    auto q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 1);
    EXPECT_EQ(q["effective"]["rate"], "1/10s");
    auto delay = line(q, "main.cf", "smtp_destination_rate_delay 10s");
    EXPECT_EQ(delay["value"], "1/10s");
    EXPECT_EQ(delay["binds"], true);
    EXPECT_EQ(line(q, "main.cf", "smtp_transport_rate_delay")["binds"], false);
}

TEST_F(Explain, ABareDestinationOnEveryTransportAndASuspendedTransport) {
    add("A", 1, "a.example");
    add("B", 1, "a.example", "relay");
    ASSERT_TRUE(sched->set_limit(
        {"relay", ""}, core::LimitChange::hold(core::AdminHold{1600, "maintenance", 7, 940})));
    auto j = explain("a.example");
    ASSERT_EQ(j["queues"].size(), 2u);
    EXPECT_EQ(j["queues"][0]["transport"], "relay");
    EXPECT_EQ(j["queues"][1]["transport"], "smtp");
    auto relay = j["queues"][0];
    EXPECT_EQ(relay["effective"]["concurrency"], 0);
    EXPECT_EQ(binding(relay), std::vector<std::string>{"admin"});
    EXPECT_EQ(line(relay, "admin")["detail"],
              "suspend relay by uid 7 at 1970-01-01T00:15:40Z (60s ago) until "
              "1970-01-01T00:26:40Z (in 600s): maintenance");
    EXPECT_EQ(relay["next_retry"]["when"], 1600);
    EXPECT_EQ(j["queues"][1]["effective"]["concurrency"], 5);

    // A word before a colon that names no transport is part of the name.
    add("C", 1, "c.example:25");
    j = explain("c.example:25");
    ASSERT_EQ(j["queues"].size(), 1u);
    EXPECT_EQ(j["queues"][0]["destination"], "c.example:25");
    EXPECT_EQ(j["target"], "c.example:25");
}

TEST_F(Explain, NoQueueShowsWhatIsKeptForItsNextMail) {
    ASSERT_TRUE(sched->set_limit({"", "x.example"},
                                 core::LimitChange::hold(core::AdminHold{0, "quiet", 0})));
    auto j = explain("x.example");
    EXPECT_EQ(j["ok"], true);
    EXPECT_EQ(j["queues"].size(), 0u);
    EXPECT_NE(j["note"].get<std::string>().find("no queue of x.example"), std::string::npos);
    ASSERT_EQ(j["kept"].size(), 1u);
    EXPECT_EQ(j["kept"][0]["detail"], "suspend x.example by uid 0 until cqmgrctl resume: quiet");
    EXPECT_EQ(explain("smtp:x.example")["kept"].size(), 1u);
    EXPECT_EQ(explain("y.example")["kept"].size(), 0u);
}

// A feature with limits of its own plugs in a source and a provider.
TEST_F(Explain, HooksAddSourcesAndProviders) {
    add("A", 2, "a.example");
    add("B", 2, "b.example");
    src->explain.sources.push_back([](const ExplainSubject& s, std::vector<LimitLine>& lines) {
        if (s.queue.name == "a.example")
            lines.push_back({LimitLine::Bound::concurrency, 2, "provider", "google: 2 at once"});
    });
    src->explain.provider_queues = [](const std::string& name) {
        using Members = std::vector<core::AdminTarget>;
        return name == "google"
                   ? std::optional(Members{
                         {"smtp", "a.example"}, {"smtp", "b.example"}, {"smtp", "gone.example"}})
                   : std::nullopt;
    };
    auto j = explain("google");
    EXPECT_EQ(j["provider"], "google");
    ASSERT_EQ(j["queues"].size(), 2u);
    EXPECT_EQ(j["queues"][0]["effective"]["concurrency"], 2);
    EXPECT_EQ(binding(j["queues"][0]), std::vector<std::string>{"provider"});
    // The core does not know the hook's limit: a.example still waits for an
    // agent there, so b.example's share binds.
    EXPECT_EQ(binding(j["queues"][1]), std::vector<std::string>{"share"});
    EXPECT_TRUE(explain("yahoo")["provider"].is_null());
}

// With the index of the mail cqmgr deferred (recovery ramp, dead backlog),
// its deferred messages are counted.
TEST_F(Explain, DeferredMailIsCountedWhenAnIndexIsKept) {
    add("A", 1, "a.example");
    DeferredIndex index;
    index.add("D1", {"smtp:a.example", "smtp:b.example"}, 1000);
    index.add("D2", {"smtp:a.example"}, 1000);
    index.add("D3", {"relay:a.example"}, 1000);
    src->deferred = &index;
    auto q = explain("smtp:a.example")["queues"][0];
    EXPECT_EQ(q["deferred"]["messages"], 2);
    EXPECT_NE(q["deferred"]["note"].get<std::string>().find("since it started"), std::string::npos);
}

TEST_F(Explain, TheQueriesAnswerIt) {
    add("A", 1, "a.example");
    ControlQueries queries(*src, ControlIdentity{1, "cqmgr test", {990, 0}});
    control::Parsed p = control::parse_request("explain smtp:a.example");
    ASSERT_TRUE(p.ok());
    auto j = nlohmann::json::parse(control::reply_line(queries.answer(*p.request)));
    EXPECT_EQ(j["queues"][0]["destination"], "a.example");
}

// A reply rule's action on the destination, kept as a restart takes it
// up: the reply rule, its reply and its end.
struct ExplainRule : Explain {
    asio::io_context io;
    std::unique_ptr<CoreRequests> requests;
    std::unique_ptr<ReplyActions> actions;

    void act(const std::string& action, int64_t until, int64_t deliveries) {
        requests = std::make_unique<CoreRequests>(io, *sched);
        actions = std::make_unique<ReplyActions>(
            RegexTable::parse("pcre", "/etc/postfix/reply_actions", "/x/ warn destination\n",
                              [](const std::string&) {}),
            *requests, clock, [](const std::string&) { return std::string("/nonexistent"); });
        ReplyActions::Active a;
        a.target = {"smtp", "a.example"};
        a.rule = "pcre:/etc/postfix/reply_actions, line 3";
        a.action = action;
        a.reason = "4.7.0 [TSS04] unexpected volume";
        a.since = 990;
        a.until = until;
        a.deliveries = deliveries;
        actions->restore({a});
        src->actions = actions.get();
        src->explain = feature_explain_hooks(nullptr, {});
    }
};

TEST_F(ExplainRule, ASuspensionStopsTheDestinationWithItsRuleAndReply) {
    add("A", 3, "a.example");
    act("suspend destination after 3/10m for 1h", 990 + 3600, 0);
    auto q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 0);
    EXPECT_EQ(binding(q), std::vector<std::string>{"reply-rule"});
    auto rule = line(q, "reply-rule");
    EXPECT_EQ(rule["bound"], "stop");
    EXPECT_EQ(rule["detail"],
              "suspended by reply rule pcre:/etc/postfix/reply_actions, line 3 (\"suspend "
              "destination after 3/10m for 1h\") on smtp:a.example since 1970-01-01T00:16:30Z "
              "(10s ago), from \"4.7.0 [TSS04] unexpected volume\" until 1970-01-01T01:16:30Z "
              "(in 3590s)");
    EXPECT_EQ(q["next_retry"]["when"], 990 + 3600);
    EXPECT_EQ(q["next_retry"]["what"],
              "suspended by a reply rule until 1970-01-01T01:16:30Z (in 3590s)");
}

TEST_F(ExplainRule, AThrottleUntilDeliveriesAndARate) {
    add("A", 3, "a.example");
    act("throttle 2 destination until 2 delivered", 0, 2);
    auto q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 2);
    EXPECT_EQ(binding(q), std::vector<std::string>{"reply-rule"});
    auto rule = line(q, "reply-rule");
    EXPECT_EQ(rule["value"], 2);
    EXPECT_NE(rule["detail"].get<std::string>().find("throttled to 2 at once by reply rule"),
              std::string::npos);
    EXPECT_TRUE(rule["detail"].get<std::string>().ends_with(" until 2 more deliveries succeed"))
        << rule.dump();

    act("rate 2/1m destination for 1h", 990 + 3600, 0);
    q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 1);
    EXPECT_EQ(q["effective"]["rate"], "1/30s");
    EXPECT_EQ(binding(q), (std::vector<std::string>{"reply-rule", "reply-rule"}));
}

// A sender group at its limit holds back its own mail: it stops the
// destination only while no other mail waits there.
TEST_F(Explain, ASenderGroupAtItsLimitStopsOnlyWhenNothingElseWaits) {
    core::SenderLimit limit;
    limit.concurrency = 1;
    sched->set_sender_limit(1, limit);
    src->explain = feature_explain_hooks(
        nullptr, [](core::SenderGroup g) { return g == 1 ? "campaign.example" : ""; });
    add("A", 3, "a.example", "smtp", 900, 1);
    auto q = explain("a.example")["queues"][0];
    EXPECT_EQ(line(q, "sender-group"), nullptr) << "not at its limit yet";
    ASSERT_NE(send(), nullptr);
    EXPECT_EQ(send(), nullptr);
    q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 0);
    EXPECT_EQ(binding(q), std::vector<std::string>{"sender-group"});
    EXPECT_EQ(line(q, "sender-group")["detail"],
              "cqmgr_sender_limits campaign.example (concurrency=1 per destination): at its "
              "concurrency limit, 1 in flight here, 2 of its entries wait; no other mail waits "
              "here that could start");

    // Another sender's mail goes ahead: the group's limit is shown, not in
    // force for the destination.
    add("B", 2, "a.example");
    q = explain("a.example")["queues"][0];
    auto group = line(q, "sender-group");
    EXPECT_EQ(group["bound"], "concurrency");
    EXPECT_EQ(group["value"], 1);
    EXPECT_EQ(group["in_force"], false);
    EXPECT_NE(group["detail"].get<std::string>().find("other senders' mail here goes ahead"),
              std::string::npos);
    EXPECT_EQ(binding(q), std::vector<std::string>{"main.cf"});
    EXPECT_NE(send(), nullptr);
}

// A reply rule's action on one sender group's mail (a sender scope) holds
// back that group's mail only: a reply-rule line that names the group,
// in force only while no other mail waits there.
TEST_F(Explain, ASenderGroupsRuleActionStopsOnlyItsMail) {
    core::SenderLimit limit;
    limit.concurrency = 5;
    sched->set_sender_limit(1, limit);
    src->explain = feature_explain_hooks(
        nullptr, [](core::SenderGroup g) { return g == 1 ? "campaign.example" : ""; });
    add("A", 2, "a.example", "smtp", 900, 1);
    sched->set_sender_rule({"smtp", "a.example"}, 1, core::RuleLimit{.hold = true, .until = 1600});
    auto q = explain("a.example")["queues"][0];
    EXPECT_EQ(q["effective"]["concurrency"], 0);
    EXPECT_EQ(binding(q), std::vector<std::string>{"reply-rule"});
    auto rule = line(q, "reply-rule");
    EXPECT_EQ(rule["bound"], "stop");
    const std::string d = rule["detail"];
    EXPECT_TRUE(d.starts_with("sender group campaign.example suspended by a reply rule's action "
                              "until 1970-01-01T00:26:40Z (in 600s), 0 in flight here, 2 of its "
                              "entries wait; no other mail waits here that could start"))
        << d;
    // Another sender's mail goes ahead: the line is not in force.
    add("B", 1, "a.example");
    q = explain("a.example")["queues"][0];
    rule = line(q, "reply-rule");
    EXPECT_EQ(rule["in_force"], false);
    EXPECT_NE(rule["detail"].get<std::string>().find("other senders' mail here goes ahead"),
              std::string::npos);
    EXPECT_EQ(binding(q), std::vector<std::string>{"main.cf"});
    core::Entry* e = send();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->message->id, "B");
}

// A sender group stopped by its rate says when its next start is.
TEST_F(Explain, ASenderGroupAtItsRateSaysWhenItStartsAgain) {
    core::SenderLimit limit;
    limit.rate_count = 1;
    limit.rate_period_ms = 60000;
    limit.rate_burst = 1;
    sched->set_sender_limit(1, limit);
    src->explain = feature_explain_hooks(nullptr, {});
    add("A", 2, "a.example", "smtp", 900, 1);
    ASSERT_NE(send(), nullptr);
    auto q = explain("a.example")["queues"][0];
    auto group = line(q, "sender-group");
    EXPECT_EQ(group["bound"], "stop");
    EXPECT_NE(group["detail"].get<std::string>().find(
                  "cqmgr_sender_limits group 1 (rate=1/60000ms,1 per destination): at its rate, "
                  "1 in flight here, 1 of its entries wait; its rate allows the next start at "
                  "1970-01-01T00:17:40Z (in 60s)"),
              std::string::npos)
        << group.dump();
}

// Over random bounds, the effective concurrency is the window selection
// works with (core::Limits::window, the share only while another
// destination waits), and exactly one concurrency or stop line binds it.
TEST_F(Explain, TheEffectiveConcurrencyIsTheWindowSelectionUses) {
    std::mt19937 rng(28);
    auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    for (int round = 0; round < 300; ++round) {
        tc.init_dest_concurrency = 1 + pick(6);
        tc.dest_share = pick(2) ? 30 : 0;
        drv.gates.clear();
        if (pick(3) == 0) drv.gates["a.example"] = pick(5);
        make();
        const std::string r = std::to_string(round);
        add("A" + r, 8, "a.example");
        if (pick(2)) add("B" + r, 8, "b.example");
        const core::AdminTarget a{"smtp", "a.example"};
        if (pick(3) == 0)
            sched->set_limit(a, core::LimitChange::cap(core::AdminCap{1 + pick(6), 0, 0}));
        if (pick(3) == 0)
            sched->set_limit(a, core::LimitChange::learned(core::LearnedLimit{pick(5), pick(2)}));
        if (pick(4) == 0) sched->set_limit(a, core::LimitChange::share(1 + pick(3), pick(2) == 0));
        if (pick(6) == 0)
            sched->set_limit({"", "a.example"}, core::LimitChange::hold(core::AdminHold{0, "", 0}));
        if (pick(4) == 0)
            sched->set_limit({"smtp", "b.example"},
                             core::LimitChange::hold(core::AdminHold{0, "", 0}));
        for (int n = pick(4); n > 0; --n)
            if (!send()) break;

        const core::Queue& q = *sched->find_queue("smtp", "a.example");
        const core::Queue* b = sched->find_queue("smtp", "b.example");
        bool others = b && b->may_start() && b->selectable_count() > 0 &&
                      b->select_window() > b->busy_count();
        int want = q.limits.stopped() ? 0 : q.limits.window(q.window, others);
        auto j = explain("smtp:a.example")["queues"][0];
        ASSERT_EQ(j["effective"]["concurrency"], want) << "round " << round << ": " << j.dump();
        int binds = 0;
        for (const auto& l : j["limits"])
            binds += l["binds"] == true && l["bound"] != "rate";
        ASSERT_EQ(binds, 1) << j.dump();
    }
}
