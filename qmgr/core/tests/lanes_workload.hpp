// Random workloads of one transport with priority lanes and destination
// shares, built and drained step by step on a fake clock, for the property
// tests (fixed seeds, so they are deterministic).
#pragma once

#include "fake_driver.hpp"

#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

namespace cqmgr::core::test {

// Draws a number in [lo, hi].
using Pick = std::function<int(int, int)>;

// A transport drawn with `pick` (its destination share with `share_pick`,
// so that a test can keep its other draws where they were): small entries,
// windows and pools, a process limit with lanes' shares, and no dead
// destinations, so that every entry is delivered.
inline TransportConfig random_lanes_transport(const Pick& pick, const Pick& share_pick) {
    TransportConfig tc;
    tc.dest_recipient_limit = pick(1, 3);
    tc.dest_concurrency_limit = pick(1, 6);
    tc.init_dest_concurrency = pick(1, 6);
    tc.slot_cost = pick(1, 6);
    tc.recipient_limit = pick(20, 200);
    tc.fail_cohort_limit = 0;
    tc.process_limit = pick(1, 12);
    tc.urgent_share = pick(0, 2) ? pick(0, 60) : 0;
    tc.bulk_share = pick(0, 2) ? pick(0, 100) : 0;
    tc.dest_share = share_pick(0, 2) ? share_pick(0, 100) : 0;
    return tc;
}

// One run: a scheduler with `tc` for every transport (retry without a
// concurrency limit) on a fake clock at 1000, its messages, and the
// entries in delivery.
struct LanesRun {
    FakeDriver drv;
    std::unique_ptr<Scheduler> s;
    std::vector<std::unique_ptr<Message>> msgs;
    std::vector<Entry*> busy;
    int total = 0;    // recipients assigned
    int finished = 0; // recipients whose delivery ended
    int64_t now = 1000;

    LanesRun(const SchedulerConfig& cfg, const TransportConfig& tc) {
        s = std::make_unique<Scheduler>(
            cfg,
            [tc](const std::string& name) {
                TransportConfig c = tc;
                if (name == "retry") c.dest_concurrency_limit = 0;
                return c;
            },
            drv);
        drv.sched = s.get();
        s->set_time(now);
    }
    // A message in a random lane with 1 to 5 recipients for `transport`,
    // each for one of `ndest` destinations dK.example, of sender group
    // `group`.
    void add_message(const Pick& pick, const std::string& transport, int ndest,
                     SenderGroup group = 0) {
        auto m = std::make_unique<Message>();
        m->id = "m" + std::to_string(msgs.size());
        m->sender_group = group;
        int l = pick(0, 2);
        m->lane = l == 0 ? Lane::urgent : l == 1 ? Lane::normal : Lane::bulk;
        s->message_add(*m);
        Transport& t = s->transport(transport);
        int n = pick(1, 5);
        for (int i = 0; i < n; ++i) {
            std::string d = "d" + std::to_string(pick(0, ndest - 1)) + ".example";
            s->assign(*m, s->queue_for(t, d, d), rcpt(m->id + "-" + std::to_string(i) + "@" + d));
        }
        total += n;
        s->batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
    }
    // Reports busy entry `i` ended with `r` (a deferred recipient ends here
    // too: it would be retried from the deferred queue).
    void finish(size_t i, const DeliveryResult& r = {}) {
        Entry* e = busy[i];
        busy.erase(busy.begin() + static_cast<long>(i));
        finished += static_cast<int>(e->rcpts.size());
        s->delivery_done(e, r);
    }
    // Delivers everything left, one delivery end a second; fails the test
    // on a connection without a request.
    void drain(unsigned seed) {
        for (int guard = 0; guard < 100000; ++guard) {
            while (Transport* t = s->select_transport()) {
                s->connection_ready(*t);
                Entry* e = s->select_entry(*t);
                ASSERT_NE(e, nullptr) << "seed " << seed << ": idle connection while draining";
                busy.push_back(e);
            }
            if (!busy.empty()) finish(0);
            s->set_time(++now);
            s->check_invariants();
            if (busy.empty() && drv.done.size() == msgs.size()) break;
        }
    }
};

} // namespace cqmgr::core::test
