// The finch policy (finch.cpp): a job alone uses every place, a job's share
// of a burst of free places shrinks as more jobs compete for them, a job
// behind a big one takes the next place freed whatever its size (where
// Rak's preemption makes it wait until the big one has earned the slots),
// and at saturation every waiting job gets one delivery before any gets
// more beyond its share.
#include "cqmgr/core/simulation.hpp"
#include "random_workload.hpp"
#include "scheduler_fixture.hpp"

#include <algorithm>
#include <map>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

struct Finch : Fixture {
    // One-recipient entries, a destination window of `window` from the
    // start, 100 agents, the finch policy (or Rak's, with `rak`).
    void setup(int window, bool rak = false) {
        tc.dest_recipient_limit = 1;
        tc.dest_concurrency_limit = window;
        tc.init_dest_concurrency = window;
        tc.process_limit = 100;
        tc.policy = rak ? SchedulerPolicy::rak : SchedulerPolicy::finch;
        make();
    }
    // Deliveries in flight per message.
    static std::map<std::string, int> count(const std::vector<Entry*>& v) {
        std::map<std::string, int> out;
        for (Entry* e : v)
            out[e->message->id]++;
        return out;
    }
};

TEST_F(Finch, AJobAloneUsesEveryPlace) {
    // No agent is left idle while mail waits: beyond its share, the only
    // job gets the place anyway.
    setup(20);
    message("BIG", 100);
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(busy.size(), 20u);
    EXPECT_EQ(count(busy)["BIG"], 20);
}

TEST_F(Finch, TheShareOfABurstShrinksWithTheFreePlaces) {
    // All places free at once: each job gets its floor of one first; then
    // the oldest job takes places while it has fewer in flight than 10 x
    // those still free after it (16 of the 17 left, about 10/11), the next
    // job one more (2 < 10 x 1), and the last goes to the oldest again.
    setup(20);
    message("A", 100);
    message("B", 100);
    message("C", 100);
    auto n = count(fill());
    EXPECT_EQ(n["A"], 17);
    EXPECT_EQ(n["B"], 2);
    EXPECT_EQ(n["C"], 1);
}

TEST_F(Finch, WithFewFreePlacesTheShareIsSmall) {
    // Two places free: the oldest job gets one, the next job the other.
    setup(2);
    message("A", 100);
    message("B", 100);
    auto n = count(fill());
    EXPECT_EQ(n["A"], 1);
    EXPECT_EQ(n["B"], 1);
}

TEST_F(Finch, TheAgentsShareToo) {
    // With 12 agents and no destination limit, the process limit is the
    // pool: the first job stops at 10 (10 < 10 x 1, 11 would leave none
    // free), the second gets its one and the last agent goes to the oldest.
    tc.dest_recipient_limit = 1;
    tc.dest_concurrency_limit = 0;
    tc.init_dest_concurrency = 100;
    tc.process_limit = 12;
    tc.policy = SchedulerPolicy::finch;
    make();
    message("A", 50);
    message("B", 50, "e.example");
    Transport& t = s->transport("smtp");
    std::vector<Entry*> busy;
    for (int i = 0; i < 12; ++i) {
        Entry* e = s->select_entry(t);
        ASSERT_NE(e, nullptr);
        busy.push_back(e);
        s->check_invariants();
    }
    auto n = count(busy);
    EXPECT_EQ(n["A"], 11);
    EXPECT_EQ(n["B"], 1);
    // B's one came second: the floor goes first.
    EXPECT_EQ(busy[1]->message->id, "B");
}

// A big job fills the window; a 30-recipient job arrives.  Returns who got
// each of the next three places freed.
std::string after_big(Finch& f) {
    f.message("BIG", 200);
    std::vector<Entry*> busy = f.fill();
    EXPECT_EQ(busy.size(), 10u);
    f.message("MID", 30);
    std::string who;
    for (int i = 0; i < 3; ++i) {
        f.deliver(busy[i]);
        for (Entry* e : f.fill())
            who += e->message->id + " ";
    }
    return who;
}

TEST_F(Finch, AJobBehindABigOneTakesTheNextFreedPlace) {
    setup(10);
    // MID has none in flight: within its share, the freed place is its.
    // Then neither is within its share (no place would be left free), and
    // the oldest job gets the next ones.
    EXPECT_EQ(after_big(*this), "MID BIG BIG ");
}

TEST_F(Finch, PlacesFreedTogetherGoToJobsBelowTheFloorFirst) {
    // A window of 4, BIG with three in flight and MID with one; three small
    // jobs to the same destination wait.  All four deliveries end before
    // the next selection (a slow daemon reads the agents' replies in one
    // go): by share alone BIG would take three places again and MID the
    // fourth, batch after batch, and the small jobs none.  The floor goes
    // first: each job gets one place, oldest first, and the next batch
    // serves the small job left over.
    setup(4);
    message("BIG", 200);
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 4u);
    message("MID", 80);
    deliver(busy[0]);
    std::vector<Entry*> more = fill();
    ASSERT_EQ(more.size(), 1u);
    EXPECT_EQ(more[0]->message->id, "MID");
    busy.erase(busy.begin());
    busy.push_back(more[0]);
    message("S1", 1);
    message("S2", 1);
    message("S3", 1);
    for (Entry* e : busy)
        deliver(e);
    busy = fill();
    auto n = count(busy);
    EXPECT_EQ(n, (std::map<std::string, int>{{"BIG", 1}, {"MID", 1}, {"S1", 1}, {"S2", 1}}));
    for (Entry* e : busy)
        deliver(e);
    n = count(fill());
    EXPECT_EQ(n, (std::map<std::string, int>{{"BIG", 2}, {"MID", 1}, {"S3", 1}}));
}

TEST_F(Finch, RakMakesTheSameJobWait) {
    // The contrast: with Rak's preemption (slot cost 5, loan 3, discount
    // 50 %), BIG has earned 2 slots with its 10 entries, 5 counting the
    // loan, short of the 15 that MID's 30 entries need: MID waits.
    setup(10, true);
    EXPECT_EQ(after_big(*this), "BIG BIG BIG ");
}

TEST_F(Finch, AtSaturationEveryJobInFlightHasOne) {
    // Many jobs, a window of 5: the floor goes first, so the first burst
    // gives five jobs one place each; then places free one at a time, with
    // none free after them, so only jobs with nothing in flight are within
    // their share, first come, first served.  Five jobs have one delivery
    // each in flight throughout: no job has two while another waits with
    // none.
    setup(5);
    for (int i = 0; i < 8; ++i)
        message("J" + std::to_string(i), 10);
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 5u);
    EXPECT_EQ(count(busy).size(), 5u);
    for (int round = 0; round < 40; ++round) {
        Entry* done = busy.front();
        busy.erase(busy.begin());
        deliver(done);
        for (Entry* e : fill())
            busy.push_back(e);
        ASSERT_EQ(busy.size(), 5u);
        auto n = count(busy);
        EXPECT_EQ(n.size(), 5u) << "round " << round;
    }
}

// The bulk-and-small scenario of tools/qmgr-sim: a 2,000-recipient list
// and one-recipient messages every 3 s to the same slow destination
// (window 5, 10 recipients an entry, 0.5 s a recipient).  Returns each
// small message's delay.
std::vector<double> small_delays(SchedulerPolicy policy) {
    SimConfig c;
    c.default_transport.dest_concurrency_limit = 5;
    c.default_transport.dest_recipient_limit = 10;
    c.default_transport.process_limit = 100;
    c.default_transport.policy = policy;
    c.check_invariants_every = 1;
    SimDestination d;
    d.name = "slow.example";
    d.latency_per_rcpt = 0.5;
    c.destinations.push_back(d);
    SimMessage list;
    list.id = "LIST";
    list.recipients = {{"slow.example", 2000}};
    c.messages.push_back(list);
    for (int i = 0; i < 20; ++i) {
        SimMessage m;
        m.id = "small" + std::to_string(i);
        m.arrival = 5 + 3 * i;
        m.recipients = {{"slow.example", 1}};
        c.messages.push_back(m);
    }
    SimResult r = simulate(c);
    EXPECT_EQ(r.delivered, 2020);
    EXPECT_EQ(r.never_finished + r.finished_twice, 0);
    std::vector<double> out;
    for (int i = 0; i < 20; ++i)
        out.push_back(r.message_done.at("small" + std::to_string(i)) - (5 + 3 * i));
    return out;
}

TEST(FinchSim, SmallJobsAreNotStarvedBehindABigOne) {
    // Each small message takes the next place the list frees: at most one
    // list entry (5 s) and its own delivery (0.5 s), however many came
    // before it.
    for (double delay : small_delays(SchedulerPolicy::finch))
        EXPECT_LE(delay, 6.0);
}

TEST(FinchSim, RakFallsBehindWhenSmallJobsComeFasterThanSlots) {
    // The contrast: Rak's list earns a slot per 5 entries it sends (one
    // entry a second here), so the small messages, one every 3 s, each
    // costing a slot, queue up behind it: each waits longer than the one
    // before.
    std::vector<double> d = small_delays(SchedulerPolicy::rak);
    EXPECT_GT(d.back(), 20.0);
}

TEST(FinchSim, EveryRecipientFinishesExactlyOnce) {
    // Random workloads (fixed seeds) under the finch policy, with a random
    // process limit and half of them with refills that land later: every
    // recipient finishes once, every connection asked for carries a
    // request (unless it had to wait for a free agent), and the structures stay consistent
    // (check_invariants after every event).
    for (unsigned seed = 1; seed <= 120; ++seed) {
        SimConfig c = cqmgr::core::test::random_workload(seed);
        std::mt19937 rng(seed);
        int limit = std::uniform_int_distribution<>(0, 12)(rng);
        for (TransportConfig* t : {&c.default_transport, &c.transports["local"]}) {
            t->policy = SchedulerPolicy::finch;
            t->process_limit = limit;
        }
        // Half of them read recipients the daemon's way, later.
        if (seed % 2) c.refill_latency = 0.5;
        c.check_invariants_every = 1;
        int total = 0;
        for (const auto& m : c.messages)
            for (const auto& [d, n] : m.recipients)
                total += n;
        SimResult r = simulate(c);
        ASSERT_EQ(r.never_finished, 0) << "seed " << seed;
        ASSERT_EQ(r.finished_twice, 0) << "seed " << seed;
        ASSERT_EQ(r.delivered + r.deferred, total) << "seed " << seed;
        ASSERT_EQ(r.idle_connections, 0) << "seed " << seed;
    }
}

} // namespace
