// Liveness of selection over random workloads (fixed seeds) with what the
// daemon layers on a queue all at once: learned limits (concurrency caps
// and rate delays, set and lifted at random), external gates, destination
// shares, priority lanes, either job policy, and deliveries that succeed,
// defer (seen by the receiver or not) or crash.  After every step:
// whenever some queue could start a delivery, the scheduler asks for a
// connection, and that connection gets a request (no queue sits idle
// waiting for an unrelated change); and in the end every recipient
// finishes.
#include "lanes_workload.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

// A queue of `t` that may start a delivery now: live, not paused or held,
// with room in its selection window and an entry not held for a refill.
// The urgent reserve does not count: it binds only while urgent mail could
// start, and then that is served.
const Queue* startable(const Transport& t) {
    if (t.dead || t.hold || t.rate_locked) return nullptr;
    for (const Queue& q : t.queues_rr)
        if (q.may_start() && q.select_window() > q.busy_count() && q.selectable_count() > 0)
            return &q;
    return nullptr;
}

// The outcome of a delivery, drawn with `pick`: mostly a success, else a
// deferral the receiver gave, one no receiver saw, or a crash.
DeliveryResult random_outcome(const Pick& pick) {
    DeliveryResult r;
    switch (pick(0, 9)) {
    case 0:
        r.kind = DeliveryResult::Kind::crashed;
        break;
    case 1:
        r.status = -1;
        break;
    case 2:
        r.status = -1;
        r.unseen = true;
        break;
    default:
        break;
    }
    return r;
}

TEST(LivenessProperty, AQueueThatMayStartIsServed) {
    for (unsigned seed = 1; seed <= 300; ++seed) {
        std::mt19937 rng(seed);
        Pick pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
        TransportConfig tc = random_lanes_transport(pick, pick);
        tc.policy = pick(0, 1) ? SchedulerPolicy::finch : SchedulerPolicy::rak;
        SchedulerConfig cfg;
        cfg.message_recipient_limit = pick(20, 200);
        cfg.verify_candidates = true;
        LanesRun run(cfg, tc);
        Scheduler& s = *run.s;
        const int ndest = pick(1, 4);
        auto dest = [&](int i) { return "d" + std::to_string(i) + ".example"; };
        for (int step = 0; step < 800; ++step) {
            int action = pick(0, 11);
            Transport& t = s.transport("relay");
            if (step < 500 && action <= 2) {
                run.add_message(pick, "relay", ndest);
            } else if (action <= 6 && !run.busy.empty()) {
                size_t i = static_cast<size_t>(pick(0, static_cast<int>(run.busy.size()) - 1));
                run.finish(i, random_outcome(pick));
            } else if (action == 7) {
                s.set_time(run.now += pick(1, 3));
            } else if (action == 8) {
                AdminTarget target{"relay", dest(pick(0, ndest - 1))};
                s.set_limit(target, LimitChange::learned(
                                        LearnedLimit{pick(0, 3), pick(0, 2) ? 0 : pick(1, 3)}));
            } else if (action == 9) {
                if (Queue* q = s.find_queue("relay", dest(pick(0, ndest - 1))))
                    s.set_limit(*q, LimitChange::gate(pick(0, 1) ? std::nullopt
                                                                 : std::optional<int>(pick(0, 3))));
            } else if (action == 10) {
                s.set_limit(AdminTarget{"relay", dest(pick(0, ndest - 1))},
                            LimitChange::share(pick(0, 3)));
            }
            s.check_invariants();
            // Liveness: a queue that may start is served now.
            if (const Queue* q = startable(t); q && t.pending == 0) {
                Transport* granted = s.select_transport();
                ASSERT_NE(granted, nullptr)
                    << "seed " << seed << " step " << step << ": " << q->name << " not served";
                s.connection_ready(*granted);
                Entry* e = s.select_entry(*granted);
                ASSERT_NE(e, nullptr) << "seed " << seed << " step " << step << ": " << q->name
                                      << " may start but its agent gets nothing";
                run.busy.push_back(e);
                s.check_invariants();
            }
        }
        // Drain: the gates open; the learned limits stay (their pauses run
        // out on the clock).
        for (int i = 0; i < ndest; ++i)
            if (Queue* q = s.find_queue("relay", dest(i)))
                s.set_limit(*q, LimitChange::gate(std::nullopt));
        run.drain(seed);
        ASSERT_EQ(run.finished, run.total) << "seed " << seed;
        ASSERT_EQ(run.drv.done.size(), run.msgs.size()) << "seed " << seed;
    }
}

} // namespace
