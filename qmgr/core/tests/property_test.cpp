// Properties of the scheduler over random workloads (fixed seeds, so the
// test is deterministic): every recipient finishes exactly once, every
// connection the scheduler asks for carries a request, the in-core
// recipient count stays within the recipient-pool bound, and a bulk job's
// delivery is stretched by preemption no more than the k/(k-1) bound allows.
#include "random_workload.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace cqmgr::core;
using cqmgr::core::test::random_workload;

TEST(Property, EveryRecipientFinishesExactlyOnceWithinThePoolBound) {
    for (unsigned seed = 1; seed <= 200; ++seed) {
        SimConfig c = random_workload(seed);
        int total = 0;
        for (const auto& m : c.messages)
            for (const auto& [d, n] : m.recipients)
                total += n;
        SimResult r = simulate(c);
        ASSERT_EQ(r.never_finished, 0) << "seed " << seed;
        ASSERT_EQ(r.finished_twice, 0) << "seed " << seed;
        ASSERT_EQ(r.delivered + r.deferred, total) << "seed " << seed;
        // Every connection the scheduler asks for carries a request.
        ASSERT_EQ(r.idle_connections, 0) << "seed " << seed;
        // First batches share qmgr_message_recipient_limit; later batches
        // come out of the transports' pools (plus their extra slots for
        // preempting jobs); every message may also hold its minimum.
        int transports = 3; // smtp, local, and retry (its pool sponsors refills too)
        int bound = c.scheduler.message_recipient_limit +
                    transports * (c.default_transport.recipient_limit +
                                  c.default_transport.extra_recipient_limit) +
                    static_cast<int>(c.messages.size()) * c.scheduler.message_recipient_minimum;
        ASSERT_LE(r.max_in_core_recipients, bound) << "seed " << seed;
    }
}

TEST(Property, BulkDeliveryIsNotInflatedBeyondTheBound) {
    // One bulk message and a stream of small ones over one destination with
    // no concurrency limit (so no blockers): count every selection made
    // between the bulk job's first and last one.
    for (unsigned seed = 1; seed <= 100; ++seed) {
        std::mt19937 rng(seed);
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
        SimConfig c;
        int k = pick(2, 8);
        c.default_transport.slot_cost = k;
        c.default_transport.slot_loan = pick(0, 3);
        c.default_transport.slot_discount = pick(0, 100);
        c.default_transport.min_slots = pick(1, 3);
        c.default_transport.dest_recipient_limit = 1;
        c.default_transport.dest_concurrency_limit = 1; // one delivery at a time
        c.default_transport.init_dest_concurrency = 1;
        c.destinations.push_back({.name = "d.example", .latency_per_rcpt = 1.0});
        int bulk = pick(50, 400);
        c.messages.push_back({.id = "BULK", .arrival = 0, .recipients = {{"d.example", bulk}}});
        int smalls = pick(10, 200);
        for (int i = 0; i < smalls; ++i)
            c.messages.push_back({.id = "s" + std::to_string(i),
                                  .arrival = pick(1, bulk) * 1.0,
                                  .recipients = {{"d.example", pick(1, 6)}}});
        SimResult r = simulate(c);
        const auto& sel = r.selections["smtp"];
        size_t first = sel.size(), last = 0;
        for (size_t i = 0; i < sel.size(); ++i)
            if (sel[i] == "BULK") {
                first = std::min(first, i);
                last = i;
            }
        ASSERT_LT(first, sel.size());
        double span = static_cast<double>(last - first + 1);
        int loan_factor = 100 - c.default_transport.slot_discount;
        // k/(k-1) for the earned slots, plus what the loan and discount let
        // other jobs take before the bulk job pays it back at its end.
        double allowance =
            (c.default_transport.slot_loan + 1.0) * k +
            (loan_factor > 0 ? 100.0 / loan_factor : 100.0) * (c.default_transport.slot_loan + 1) +
            6;
        ASSERT_LE(span, bulk * k / (k - 1.0) + allowance)
            << "seed " << seed << " k " << k << " bulk " << bulk;
    }
}
