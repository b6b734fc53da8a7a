// Random scheduler workloads for the property tests (fixed seeds, so the
// tests are deterministic).
#pragma once

#include "cqmgr/core/simulation.hpp"

#include <random>
#include <string>

namespace cqmgr::core::test {

// How a random workload may vary beyond the defaults.
struct WorkloadShape {
    int max_messages = 40;
    int min_slot_cost = 1; // 2 or more: preemption always on
};

// A random mix of destinations, transports and messages.
inline SimConfig random_workload(unsigned seed, WorkloadShape shape = {}) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
    SimConfig c;
    c.seed = seed;
    c.scheduler.message_recipient_limit = pick(50, 400);
    c.scheduler.message_recipient_minimum = pick(1, 10);
    c.scheduler.minimal_backoff_time = 30;
    c.default_transport.dest_recipient_limit = pick(1, 20);
    c.default_transport.recipient_limit = pick(20, 300);
    c.default_transport.extra_recipient_limit = pick(0, 50);
    c.default_transport.refill_limit = pick(1, 50);
    c.default_transport.refill_delay = pick(1, 5);
    c.default_transport.dest_concurrency_limit = pick(1, 10);
    c.default_transport.init_dest_concurrency = pick(1, 5);
    c.default_transport.slot_cost = pick(shape.min_slot_cost, 6);
    c.default_transport.slot_loan = pick(0, 4);
    c.default_transport.slot_discount = pick(0, 100);
    c.default_transport.fail_cohort_limit = pick(0, 2);
    c.transports["local"] = c.default_transport;
    c.transports["local"].dest_recipient_limit = 1;
    int ndest = pick(1, 12);
    for (int i = 0; i < ndest; ++i) {
        SimDestination d;
        d.name = "d" + std::to_string(i) + ".example";
        d.transport = pick(0, 4) == 0 ? "local" : "smtp";
        d.server_limit = pick(0, 3) == 0 ? pick(1, 4) : 0;
        d.latency_per_rcpt = pick(1, 20) / 10.0;
        d.fail_ratio = pick(0, 3) == 0 ? pick(1, 30) / 100.0 : 0;
        d.down = pick(0, 9) == 0;
        if (d.down && pick(0, 1)) d.down_until = pick(10, 100);
        c.destinations.push_back(d);
    }
    int nmsg = pick(1, shape.max_messages);
    for (int i = 0; i < nmsg; ++i) {
        SimMessage m;
        m.id = "m" + std::to_string(i);
        m.arrival = pick(0, 60);
        int parts = pick(1, 4);
        for (int p = 0; p < parts; ++p)
            m.recipients.emplace_back(c.destinations[pick(0, ndest - 1)].name,
                                      pick(0, 9) == 0 ? pick(50, 600) : pick(1, 5));
        c.messages.push_back(m);
    }
    return c;
}

} // namespace cqmgr::core::test
