// The indexed preemption candidate search against the reference scan: over
// random workloads built to preempt a lot (bulk and small messages, slow and
// failing destinations, so jobs stack, block and get re-linked), every
// search the index answers is repeated by the scan and must pick the same
// job (SchedulerConfig::verify_candidates panics otherwise), and the index
// is checked against the job list after every event.
#include "random_workload.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace cqmgr::core;

namespace {

// A random workload with preemption on and up to 250 messages, checked as
// it runs.
SimConfig preempting_workload(unsigned seed) {
    SimConfig c = test::random_workload(seed, {.max_messages = 250, .min_slot_cost = 2});
    c.check_invariants = true;
    c.scheduler.verify_candidates = true;
    std::mt19937 rng(seed);
    int min_slots = std::uniform_int_distribution<>(1, 3)(rng);
    c.default_transport.min_slots = min_slots;
    for (auto& [name, tc] : c.transports)
        tc.min_slots = min_slots;
    return c;
}

} // namespace

TEST(CandidateIndex, ChoosesWhatTheScanChoosesOnRandomWorkloads) {
    long indexed = 0, scanned = 0;
    for (unsigned seed = 1; seed <= 120; ++seed) {
        SimConfig c = preempting_workload(seed);
        SimResult r = simulate(c);
        ASSERT_EQ(r.never_finished, 0) << "seed " << seed;
        indexed += r.indexed_searches;
        scanned += r.scanned_searches;
    }
    // The workloads do search, and the index answers nearly all searches.
    EXPECT_GT(indexed, 1000);
    EXPECT_LT(scanned * 100, indexed) << indexed << " indexed, " << scanned << " scanned";
}

TEST(CandidateIndex, SurvivesCrowdedPositionLabels) {
    // Small jobs for a destination that takes one delivery at a time keep
    // preempting a bulk job and then block in front of it, each placed
    // between the last one and the bulk job: the label gap there halves
    // every time until the labels around it must be spread again.
    SimConfig c;
    c.check_invariants = true;
    c.scheduler.verify_candidates = true;
    c.default_transport.slot_cost = 2;
    c.default_transport.slot_loan = 3;
    c.default_transport.min_slots = 1;
    c.default_transport.dest_recipient_limit = 1;
    c.default_transport.dest_concurrency_limit = 1;
    c.default_transport.init_dest_concurrency = 1;
    c.destinations.push_back({.name = "fast.example", .latency_per_rcpt = 0.1});
    c.destinations.push_back({.name = "slow.example", .latency_per_rcpt = 100.0});
    c.messages.push_back({.id = "BULK", .arrival = 0, .recipients = {{"fast.example", 3000}}});
    for (int i = 0; i < 120; ++i)
        c.messages.push_back({.id = "s" + std::to_string(i),
                              .arrival = 1.0 + i * 0.5,
                              .recipients = {{"slow.example", 1}}});
    SimResult r = simulate(c);
    EXPECT_EQ(r.never_finished, 0);
    EXPECT_GT(r.indexed_searches, 100);
    EXPECT_GT(r.relabels, 0);
}
