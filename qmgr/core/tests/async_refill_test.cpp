// The scheduler with asynchronous refills, as the daemon drives it: a refill
// is a request, and the batch is assigned (and batch_done() called) some
// simulated time later.  Meanwhile a peer's last, unfilled entry is held
// back for it.  Random workloads run with the invariant checks and the
// candidate search verification on; every recipient must finish exactly
// once, and no connection that the scheduler asks for may go without a
// request.
#include "random_workload.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <random>

using namespace cqmgr::core;

namespace {

// A random workload whose batches take `latency` simulated seconds to read.
SimConfig delayed_refills(unsigned seed, double latency, test::WorkloadShape shape) {
    SimConfig c = test::random_workload(seed, shape);
    c.refill_latency = latency;
    c.check_invariants_every = 5;
    c.scheduler.verify_candidates = true;
    return c;
}

int recipients(const SimConfig& c) {
    int total = 0;
    for (const auto& m : c.messages)
        for (const auto& [d, n] : m.recipients)
            total += n;
    return total;
}

} // namespace

TEST(AsyncRefill, EveryRecipientFinishesAndNoConnectionGoesUnused) {
    int idle = 0;
    long early = 0, selections = 0;
    for (unsigned seed = 1; seed <= 60; ++seed) {
        double latency = 0.25 * (1 + seed % 8); // 0.25 .. 2 s
        SimConfig c = delayed_refills(
            seed, latency, {.max_messages = 60, .min_slot_cost = 1 + static_cast<int>(seed % 2)});
        SimResult r = simulate(c);
        ASSERT_EQ(r.never_finished, 0) << "seed " << seed;
        ASSERT_EQ(r.finished_twice, 0) << "seed " << seed;
        ASSERT_EQ(r.delivered + r.deferred, recipients(c)) << "seed " << seed;
        idle += r.idle_connections;
        early += r.early_entries;
        for (const auto& [t, sel] : r.selections)
            selections += static_cast<long>(sel.size());
        EXPECT_EQ(r.idle_connections, 0) << "seed " << seed;
    }
    EXPECT_EQ(idle, 0) << "connections that carried no request, over 60 seeds";
    std::printf("over 60 seeds: %ld requests, %d connections without one, %ld entries sent before "
                "their refill\n",
                selections, idle, early);
}

// Workloads built to preempt a lot (up to 250 messages, slot cost 2 or
// more), where held jobs become preemption candidates and current jobs.
TEST(AsyncRefill, PreemptingWorkloadsStayConsistent) {
    for (unsigned seed = 1; seed <= 40; ++seed) {
        SimConfig c =
            delayed_refills(seed, 0.5 * (1 + seed % 4), {.max_messages = 250, .min_slot_cost = 2});
        c.check_invariants_every = 11;
        SimResult r = simulate(c);
        ASSERT_EQ(r.never_finished, 0) << "seed " << seed;
        ASSERT_EQ(r.finished_twice, 0) << "seed " << seed;
        ASSERT_EQ(r.delivered + r.deferred, recipients(c)) << "seed " << seed;
        EXPECT_EQ(r.idle_connections, 0) << "seed " << seed;
    }
}
