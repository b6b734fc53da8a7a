// Tests of cqmgr's features in qmgr-sim, each against the same workload
// without it: a provider's limits keep a shared receiver within its
// allowance (its peak sessions, nothing refused, the drain at its rate);
// a reply rule that suspends the provider stops the attempts a blocking
// receiver refuses; a sender limit lets a trickle pass a campaign; and
// the workload's new keys, the summary and the CSV.
#include "cqmgr/test/temp_dir.hpp"
#include "postfix_config.hpp"
#include "summary.hpp"
#include "timeline_csv.hpp"
#include "workload.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>

using namespace cqmgr;

namespace {

const std::string scenarios = QMGR_SIM_SCENARIOS;

// A workload's outcome with -o `overrides`, the features on as configured.
core::SimResult play(sim::Workload& w,
                     std::vector<std::pair<std::string, std::string>> overrides = {}) {
    sim::PostfixSources src;
    src.overrides = std::move(overrides);
    sim::apply_postfix_config(src, w, [](const std::string&) {});
    return core::simulate(w.sim, w.hooks.get());
}

const core::SimProviderStats& receiver(const core::SimResult& r) {
    return r.providers.at("yahoo");
}

// The most deliveries of messages whose id starts with `prefix` at once.
int most_at_once(const core::SimResult& r, const std::string& prefix) {
    std::vector<std::pair<double, int>> edges;
    for (const auto& d : r.deliveries)
        if (d.message.rfind(prefix, 0) == 0 && d.end > d.start) {
            edges.push_back({d.start, 1});
            edges.push_back({d.end, -1});
        }
    std::sort(edges.begin(), edges.end()); // an end before a start at the same time
    int now = 0, most = 0;
    for (const auto& [t, step] : edges)
        most = std::max(most, now += step);
    return most;
}

// The longest delay of the messages whose id starts with `prefix`.
double longest_delay(const sim::Workload& w, const core::SimResult& r, const std::string& prefix) {
    double most = 0;
    for (const auto& m : w.sim.messages)
        if (m.id.rfind(prefix, 0) == 0) most = std::max(most, r.message_done.at(m.id) - m.arrival);
    return most;
}

TEST(Providers, ProviderLimitsKeepTheSharedReceiverWithinItsAllowance) {
    // Stock: each of the 50 domains has its own window; the receiver
    // allows 10 sessions and 300 messages a minute for all of them.
    auto stock_w = sim::read_workload(scenarios + "/provider-limits.toml");
    auto stock = play(stock_w);
    EXPECT_EQ(stock_w.hooks, nullptr); // no feature on: the stock path
    EXPECT_EQ(stock.attempts, 2000);
    EXPECT_GT(receiver(stock).refused, 1000);
    EXPECT_GT(receiver(stock).max_connections, 10);
    EXPECT_GT(stock.deferred, 1000);

    // The provider's limits, as the admin would set them (the core's
    // invariants checked as the gates move).
    auto w = sim::read_workload(scenarios + "/provider-limits.toml");
    w.sim.check_invariants_every = 5;
    auto r = play(w, {{"cqmgr_provider_concurrency_limits", "inline:{yahoo=10}"},
                      {"cqmgr_provider_rate_limits", "inline:{{yahoo=300/min,1}}"}});
    EXPECT_LE(receiver(r).max_connections, 10);
    EXPECT_LE(r.deferred, r.attempts / 100); // at most 1 % of the attempts
    EXPECT_EQ(r.delivered + r.deferred, 2000);
    // 2,000 messages at 300 a minute take 400 s: the drain keeps to it.
    EXPECT_NEAR(r.end_time, 400, 20);

    // The concurrency limit alone keeps the sessions within 10, but not
    // the rate.
    auto c = sim::read_workload(scenarios + "/provider-limits.toml");
    auto cr = play(c, {{"cqmgr_provider_concurrency_limits", "inline:{yahoo=10}"}});
    EXPECT_LE(receiver(cr).max_connections, 10);
    EXPECT_GT(receiver(cr).refused, 100);
}

TEST(Providers, ProviderMapsDecideTheMembers) {
    // A table that names only some of the domains: the others are on
    // their own, and the receiver refuses them.
    auto w = sim::read_workload(scenarios + "/provider-limits.toml");
    auto r = play(w, {{"cqmgr_provider_maps", "inline:{d01.example=yahoo,d02.example=yahoo}"},
                      {"cqmgr_provider_concurrency_limits", "inline:{yahoo=10}"}});
    EXPECT_GT(receiver(r).max_connections, 10);
}

TEST(ReplyRules, SuspendingTheProviderStopsTheRefusedAttempts) {
    auto stock_w = sim::read_workload(scenarios + "/provider-tss04.toml");
    stock_w.reply_actions.clear();
    auto stock = play(stock_w);
    auto w = sim::read_workload(scenarios + "/provider-tss04.toml");
    w.sim.check_invariants_every = 5;
    auto r = play(w);
    // Stock tries through each 2-minute block; the rule stops at the first
    // TSS04 (only the sessions already under way are refused).
    EXPECT_GT(receiver(stock).refused, 300);
    EXPECT_LE(receiver(r).refused * 10, receiver(stock).refused);
    EXPECT_EQ(r.delivered + r.deferred, 600);
    EXPECT_GT(r.delivered, 550);
    // The actions: each suspends all three members for 130 s, and
    // delivery resumes when it ends.
    ASSERT_FALSE(r.events.empty());
    const auto& first = r.events.front();
    EXPECT_EQ(first.what, "start");
    EXPECT_NE(first.text.find("suspend provider for 130s"), std::string::npos) << first.text;
    EXPECT_NE(first.text.find("[TSS04]"), std::string::npos) << first.text;
    int starts = 0, ends = 0;
    for (const auto& e : r.events) {
        starts += e.what == "start";
        ends += e.what == "end";
        if (e.what == "end") {
            // Each member's suspension lasts its 130 s (the core's whole seconds).
            auto began = std::find_if(r.events.rbegin(), r.events.rend(), [&](const auto& s) {
                return s.what == "start" && s.target == e.target && s.time < e.time;
            });
            ASSERT_NE(began, r.events.rend());
            EXPECT_NEAR(e.time - began->time, 130, 1.0) << e.target;
        }
    }
    EXPECT_EQ(starts % 3, 0);
    EXPECT_GE(starts, 3);
    EXPECT_GE(ends, starts - 3);
    // Nothing is attempted while the provider is suspended.
    for (const auto& d : r.deliveries)
        for (const auto& e : r.events)
            if (e.what == "start" && e.target == "smtp:" + d.destination) {
                EXPECT_FALSE(d.start > e.time + 0.01 && d.start < e.time + 129) << d.start;
            }
}

TEST(ReplyRules, MainCfsTableIsUsedWithoutTheWorkloads) {
    cqmgr::test::TempDir dir{"qmgr-sim-rules"};
    dir.write("reply_actions", "/\\[TSS04\\]/ suspend provider for 130s\n");
    auto w = sim::read_workload(scenarios + "/provider-tss04.toml");
    w.reply_actions.clear();
    auto r = play(w, {{"cqmgr_reply_actions", "pcre:" + dir.file("reply_actions")}});
    ASSERT_FALSE(r.events.empty());
    EXPECT_NE(r.events.front().text.find("pcre:" + dir.file("reply_actions") + ", line 1"),
              std::string::npos)
        << r.events.front().text;
    EXPECT_LT(receiver(r).refused, 30);
}

TEST(ReplyRules, ABadRuleDoesNothing) {
    auto w = sim::read_workload(scenarios + "/provider-tss04.toml");
    w.reply_actions = "/\\[TSS04\\]/ suspend galaxy for 130s\n";
    auto r = play(w);
    EXPECT_TRUE(r.events.empty());
    EXPECT_GT(receiver(r).refused, 300);
}

TEST(SenderLimits, ACampaignsLimitLetsTheTricklePass) {
    auto stock_w = sim::read_workload(scenarios + "/provider-senders.toml");
    auto stock = play(stock_w);
    auto w = sim::read_workload(scenarios + "/provider-senders.toml");
    w.sim.check_invariants_every = 5;
    auto r = play(w, {{"cqmgr_sender_limits", "inline:{campaign.example=concurrency=5}"}});
    EXPECT_GT(longest_delay(stock_w, stock, "trickle"), 10);
    EXPECT_LE(longest_delay(w, r, "trickle"), 2);
    EXPECT_GT(most_at_once(stock, "campaign"), 5);
    EXPECT_LE(most_at_once(r, "campaign"), 5);
    EXPECT_EQ(r.delivered, 620);
}

TEST(Workload, ProvidersAndSendersAreRead) {
    auto w = sim::parse_workload(R"(
destination = [ { name = "d.example", provider = "p" } ]
[[provider]]
name = "p"
session_limit = 3
message_limit = 10
message_period = "2m"
block_for = 30
rate_reply = "421 4.7.0 [TSS04] slow down"
[[message]]
sender = "a@b.example"
recipients = { "d.example" = 1 }
)",
                                 "w.toml");
    ASSERT_EQ(w.sim.providers.size(), 1u);
    const auto& p = w.sim.providers[0];
    EXPECT_EQ(p.session_limit, 3);
    EXPECT_EQ(p.message_limit, 10);
    EXPECT_EQ(p.message_period, 120);
    EXPECT_EQ(p.block_for, 30);
    EXPECT_EQ(p.rate_reply, "421 4.7.0 [TSS04] slow down");
    EXPECT_EQ(w.sim.destinations[0].provider, "p");
    EXPECT_EQ(w.sim.messages[0].sender, "a@b.example");
    auto error = [](const std::string& text) {
        try {
            sim::parse_workload(text, "w.toml");
        } catch (const sim::WorkloadError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(error("[[provider]]\nname = \"p\"\nrate_reply = \"550 no\"\n"),
              "w.toml:3: rate_reply: expected one SMTP reply line \"4NN 4.X.Y text\"");
    EXPECT_EQ(error("[[provider]]\nsession_limit = 3\n"),
              "w.toml:1: [[provider]]: name is required");
    EXPECT_EQ(error("[[provider]]\nname = \"p\"\nspeed = 3\n"),
              "w.toml:3: unknown key \"speed\" in [[provider]]");
}

TEST(Report, SummaryAndCsvShowProvidersAndActions) {
    auto w = sim::read_workload(scenarios + "/provider-tss04.toml");
    auto r = play(w);
    std::ostringstream summary;
    sim::print_summary(w.sim, r, summary);
    EXPECT_NE(summary.str().find("delivery attempts: 600, of which refused by a receiver: "),
              std::string::npos)
        << summary.str();
    EXPECT_NE(summary.str().find("\nyahoo "), std::string::npos) << summary.str();
    EXPECT_NE(summary.str().find(".example +2 "), std::string::npos) << summary.str();
    std::ostringstream csv;
    sim::write_csv(sim::timeline_columns(w.sim, r), r, csv);
    std::string header = csv.str().substr(0, csv.str().find('\n'));
    EXPECT_NE(header.find(",held:a.example"), std::string::npos) << header;
    EXPECT_NE(header.find(",sessions:provider:yahoo"), std::string::npos) << header;
}

} // namespace
