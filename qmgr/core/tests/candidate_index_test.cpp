// The indexed preemption candidate search against the reference scan: over
// random workloads built to preempt a lot (bulk and small messages, slow and
// failing destinations, so jobs stack, block and get re-linked), every
// search the index answers is repeated by the scan and must pick the same
// job (SchedulerConfig::verify_candidates panics otherwise), and the index
// is checked against the job list every few events.
#include "core_access.hpp"
#include "fake_driver.hpp"
#include "random_workload.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace cqmgr::core;

namespace {

// A random workload with preemption on and up to 250 messages, checked as
// it runs (the full invariant check every few events, to keep it quick).
SimConfig preempting_workload(unsigned seed) {
    SimConfig c = test::random_workload(seed, {.max_messages = 250, .min_slot_cost = 2});
    c.check_invariants_every = 7;
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
    c.check_invariants_every = 1;
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

TEST(CandidateIndex, DeclinesWhenTheScanStopsBeforeAStackedBestJob) {
    // Job list C Y Z S P: S, the oldest message, is stacked on P.  From C,
    // the scan takes Y (one entry, age 51), stops there (a level-zero job no
    // older than its best score), and never sees S (two entries, age 201:
    // score 100.5).  The index must not answer S.
    test::FakeDriver drv;
    SchedulerConfig cfg;
    cfg.verify_candidates = true;
    Scheduler s(
        cfg, [](const std::string&) { return test::unlimited_single_rcpt(2); }, drv);
    drv.sched = &s;
    Transport& t = s.transport("smtp");
    Queue& q = s.queue_for(t, "dest.example", "dest.example");
    std::map<std::string, std::unique_ptr<Message>> msgs;
    auto add = [&](const std::string& id, int64_t when, int rcpts) -> Job& {
        s.set_time(when);
        auto& m = msgs[id] = std::make_unique<Message>();
        m->id = id;
        s.message_add(*m);
        for (int r = 0; r < rcpts; ++r)
            s.assign(*m, q, test::rcpt("r" + std::to_string(r) + "@" + id));
        s.batch_done(*m, false, 0);
        return *find_job(*m, t);
    };
    Job& js = add("S", 0, 2);
    Job& jc = add("C", 150, 40);
    Job& jy = add("Y", 150, 1);
    add("Z", 150, 3);
    Job& jp = add("P", 150, 5);
    Jobs& jobs = SchedulerAccess::core(s).jobs;
    jobs.push(js, jp);
    s.check_invariants();
    s.set_time(200);
    // C can earn 40 / 2 slots: the index alone declines, the scan answers.
    EXPECT_FALSE(t.candidates.best(jc, 20, 200));
    EXPECT_EQ(jobs.candidate(jc), &jy);
    EXPECT_EQ(t.candidates.scanned_searches, 1);
    EXPECT_EQ(t.candidates.indexed_searches, 0);
}
