// Priority lanes (lanes.cpp): urgent mail before a campaign of small jobs,
// before a big job whatever its slots, the urgent reserve of a transport's
// process limit, and the share other mail keeps.
#include "cqmgr/core/simulation.hpp"
#include "scheduler_fixture.hpp"

#include <algorithm>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

struct Lanes : Fixture {
    // A message of `n` recipients for `queue` on smtp, in lane `lane`.
    Message& lane_message(const std::string& id, Lane lane, int n,
                          const std::string& queue = "d.example") {
        return message(id, n, queue, "smtp", lane);
    }
    // One-recipient entries, no destination limits, `process_limit` agents.
    void unlimited(int process_limit) {
        tc.dest_concurrency_limit = 0;
        tc.init_dest_concurrency = 100;
        tc.dest_recipient_limit = 1;
        tc.process_limit = process_limit;
    }
};

TEST_F(Lanes, UrgentGoesBeforeACampaignOfSmallJobs) {
    // The campaign: one-recipient messages, each its own job, at the
    // destination's window of 4.  Rak serves them first come, first served.
    // Both shares are set: the window, well below the process limit, is
    // what urgent and bulk mail compete for.
    tc.dest_recipient_limit = 1;
    tc.dest_concurrency_limit = 4;
    tc.init_dest_concurrency = 4;
    tc.process_limit = 100;
    tc.urgent_share = 10;
    tc.bulk_share = 10;
    make();
    for (int i = 0; i < 200; ++i)
        lane_message("b" + std::to_string(i), Lane::bulk, 1);
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 4u);
    lane_message("U1", Lane::urgent, 1);
    lane_message("U2", Lane::urgent, 1);
    lane_message("N", Lane::normal, 1);        // a normal message waits its turn
    EXPECT_EQ(s->select_transport(), nullptr); // the window is full
    deliver(busy[0]);
    std::vector<Entry*> next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->id, "U1");
    deliver(busy[1]);
    next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->id, "U2");
    deliver(busy[2]);
    next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->id, "b4");
}

TEST_F(Lanes, UrgentPreemptsABigJobWhateverItsSlots) {
    // A big job that has earned no slots yet: Rak would not preempt it.
    tc = unlimited_single_rcpt(5);
    make();
    lane_message("BIG", Lane::bulk, 100);
    Transport& t = s->transport("smtp");
    Entry* first = s->select_entry(t);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->message->id, "BIG");
    lane_message("U", Lane::urgent, 3);
    for (int i = 0; i < 3; ++i) {
        Entry* e = s->select_entry(t);
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->message->id, "U") << i;
        s->check_invariants();
    }
    Entry* after = s->select_entry(t);
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->message->id, "BIG");
}

TEST_F(Lanes, TheUrgentReserveGoesToUrgentMailWhileItWaits) {
    // Process limit 10, 20 % for urgent mail: while urgent mail waits for
    // an agent, other mail with 8 or more in flight gets none.
    unlimited(10);
    tc.urgent_share = 20;
    make();
    for (int i = 0; i < 30; ++i)
        lane_message("n" + std::to_string(i), i % 2 ? Lane::normal : Lane::bulk, 1,
                     "d" + std::to_string(i % 3) + ".example");
    Transport& t = s->transport("smtp");
    EXPECT_EQ(lane_cap(t), 8);
    // No urgent mail: other mail has every agent, the reserve's too.
    std::vector<Entry*> busy = fill_agents("smtp", 10);
    EXPECT_EQ(busy.size(), 10u);
    EXPECT_FALSE(lane_reserve_binds(t));
    lane_message("U1", Lane::urgent, 1, "d1.example");
    lane_message("U2", Lane::urgent, 1, "d2.example");
    lane_message("U3", Lane::urgent, 1, "d0.example");
    EXPECT_TRUE(urgent_waits(t));
    EXPECT_TRUE(lane_reserve_binds(t));
    EXPECT_TRUE(fill_agents("smtp", 10).empty()); // every agent is busy
    // Each agent that a delivery of other mail frees goes to urgent mail.
    deliver(busy[0]);
    std::vector<Entry*> u1 = fill_agents("smtp", 10);
    ASSERT_EQ(u1.size(), 1u);
    EXPECT_EQ(u1[0]->message->id, "U1");
    deliver(busy[1]);
    std::vector<Entry*> u2 = fill_agents("smtp", 10);
    ASSERT_EQ(u2.size(), 1u);
    EXPECT_EQ(u2[0]->message->id, "U2");
    // 8 other deliveries in flight, at the cap: an urgent one's end gives
    // one connection, for U3, and none that only other mail could use.
    deliver(u1[0]);
    EXPECT_EQ(s->select_transport(), &t);
    EXPECT_EQ(s->select_transport(), nullptr);
    s->connection_ready(t);
    Entry* u3 = s->select_entry(t);
    ASSERT_NE(u3, nullptr);
    EXPECT_EQ(u3->message->id, "U3");
    // No urgent mail waits any more: the agents that free go to other
    // mail, beyond the cap.
    deliver(u2[0]);
    deliver(u3);
    std::vector<Entry*> more = fill_agents("smtp", 10);
    ASSERT_EQ(more.size(), 2u);
    for (Entry* e : more)
        EXPECT_NE(e->message->lane, Lane::urgent);
    EXPECT_EQ(lane_other_busy(t), 10);
    s->check_invariants();
}

TEST_F(Lanes, OtherMailKeepsItsGuaranteedShare) {
    // Other mail keeps 30 % of the deliveries in flight while a flood of
    // urgent mail waits.
    unlimited(10);
    tc.bulk_share = 30;
    make();
    for (int i = 0; i < 20; ++i)
        lane_message("b" + std::to_string(i), Lane::bulk, 1);
    for (int i = 0; i < 20; ++i)
        lane_message("u" + std::to_string(i), Lane::urgent, 1);
    Transport& t = s->transport("smtp");
    auto count = [&](const std::vector<Entry*>& es, Lane l) {
        return std::count_if(es.begin(), es.end(), [&](Entry* e) { return e->message->lane == l; });
    };
    std::vector<Entry*> sel;
    for (int i = 0; i < 10; ++i) {
        sel.push_back(s->select_entry(t));
        ASSERT_NE(sel.back(), nullptr);
    }
    EXPECT_EQ(count(sel, Lane::bulk), 3);
    EXPECT_EQ(count(sel, Lane::urgent), 7);
    // A bulk delivery ends: its place goes to bulk again, not to urgent.
    auto bulk = std::find_if(sel.begin(), sel.end(),
                             [](Entry* e) { return e->message->lane == Lane::bulk; });
    ASSERT_NE(bulk, sel.end());
    deliver(*bulk);
    sel.erase(bulk);
    Entry* e = s->select_entry(t);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->message->lane, Lane::bulk);
    // An urgent delivery's end: urgent goes first again.
    auto urgent = std::find_if(sel.begin(), sel.end(),
                               [](Entry* x) { return x->message->lane == Lane::urgent; });
    ASSERT_NE(urgent, sel.end());
    deliver(*urgent);
    e = s->select_entry(t);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->message->lane, Lane::urgent);
}

TEST_F(Lanes, UrgentMailHasTheAgentsOtherMailDoesNotWaitFor) {
    // Other mail is owed 30 % of the deliveries in flight, but has only
    // two messages: urgent mail has the rest, and the agent a bulk
    // delivery frees once no other mail waits.
    unlimited(10);
    tc.bulk_share = 30;
    make();
    lane_message("b0", Lane::bulk, 1);
    lane_message("b1", Lane::bulk, 1);
    for (int i = 0; i < 20; ++i)
        lane_message("u" + std::to_string(i), Lane::urgent, 1);
    std::vector<Entry*> sel = fill_agents("smtp", 10);
    ASSERT_EQ(sel.size(), 10u);
    auto bulk = [](const Entry* e) { return e->message->lane == Lane::bulk; };
    EXPECT_EQ(std::count_if(sel.begin(), sel.end(), bulk), 2);
    Transport& t = s->transport("smtp");
    auto b = std::find_if(sel.begin(), sel.end(), bulk);
    deliver(*b);
    EXPECT_TRUE(lane_owed(t));
    std::vector<Entry*> next = fill_agents("smtp", 10);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0]->message->lane, Lane::urgent);
    s->check_invariants();
}

TEST_F(Lanes, GivingAnEntryBackKeepsTheCounts) {
    tc.dest_recipient_limit = 1;
    tc.process_limit = 4;
    tc.urgent_share = 50;
    make();
    lane_message("U", Lane::urgent, 2);
    lane_message("B", Lane::bulk, 2);
    Transport& t = s->transport("smtp");
    Entry* e = s->select_entry(t);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(t.lane_busy[static_cast<int>(Lane::urgent)], 1);
    s->entry_unselect(e);
    s->check_invariants();
    EXPECT_EQ(t.lane_busy[static_cast<int>(Lane::urgent)], 0);
    EXPECT_EQ(s->find_queue("smtp", "d.example")->urgent_todo, 2);
}

TEST_F(Lanes, WithoutUrgentMailOrSharesSelectionIsStock) {
    // The same workload through a scheduler with all mail normal and one
    // with the bulk lane named: the same selections.
    tc = unlimited_single_rcpt(3);
    std::vector<std::string> runs[2];
    for (int run = 0; run < 2; ++run) {
        msgs.clear();
        make();
        lane_message("BIG", run ? Lane::bulk : Lane::normal, 40);
        for (int i = 0; i < 10; ++i)
            lane_message("s" + std::to_string(i), Lane::normal, 2);
        Transport& t = s->transport("smtp");
        while (Entry* e = s->select_entry(t)) {
            runs[run].push_back(e->message->id);
            deliver(e);
        }
    }
    EXPECT_EQ(runs[0], runs[1]);
}

} // namespace

namespace {

// The case priority lanes are for, in the simulator at a smaller scale
// (tools/bench's urgent-amid-bulk at full scale): a campaign of one-recipient bulk messages to one
// destination (0.5 s a message, concurrency 20) and urgent messages arriving during it.
SimConfig campaign(Lane urgent_lane) {
    SimConfig c;
    c.default_transport.dest_recipient_limit = 1;
    c.default_transport.dest_concurrency_limit = 20;
    c.default_transport.init_dest_concurrency = 20;
    c.default_transport.process_limit = 100;
    c.default_transport.urgent_share = 10;
    c.default_transport.bulk_share = 10;
    c.check_invariants_every = 97;
    c.destinations.push_back({.name = "big.example", .latency_per_rcpt = 0.5});
    for (int i = 0; i < 2000; ++i)
        c.messages.push_back({.id = "b" + std::to_string(i),
                              .arrival = 0,
                              .recipients = {{"big.example", 1}},
                              .lane = Lane::bulk});
    for (int i = 0; i < 50; ++i)
        c.messages.push_back({.id = "u" + std::to_string(i),
                              .arrival = 1.0 + i,
                              .recipients = {{"big.example", 1}},
                              .lane = urgent_lane});
    return c;
}

// The longest delay of an urgent message, and when the last message ended.
std::pair<double, double> urgent_delay_and_drain(const SimConfig& c) {
    SimResult r = simulate(c);
    EXPECT_EQ(r.delivered, 2050);
    EXPECT_EQ(r.idle_connections, 0);
    double worst = 0;
    for (const auto& m : c.messages)
        if (m.id[0] == 'u') worst = std::max(worst, r.message_done.at(m.id) - m.arrival);
    return {worst, r.end_time};
}

TEST(LanesSim, UrgentMessagesDoNotWaitForACampaign) {
    auto [lanes_delay, lanes_drain] = urgent_delay_and_drain(campaign(Lane::urgent));
    auto [stock_delay, stock_drain] = urgent_delay_and_drain(campaign(Lane::normal));
    // Each urgent message takes the next free place in the window.
    EXPECT_LE(lanes_delay, 1.5);
    // Without a lane, they wait behind the campaign (first come, first served).
    EXPECT_GE(stock_delay, 20.0);
    // The campaign drains as fast either way.
    EXPECT_LE(lanes_drain, stock_drain + 1.0);
}

} // namespace
