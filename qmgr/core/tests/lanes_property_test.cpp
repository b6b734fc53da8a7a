// Properties of priority lanes and destination shares over random
// workloads (fixed seeds): at every selection, urgent mail goes first
// unless other mail is owed its share, other mail passes urgent mail that
// could go only while it is owed its share and under its cap (so the
// agents go back to urgent mail as soon as it waits), urgent mail passes
// other mail that could go only while other mail is not owed its share or
// is at its cap, no destination exceeds its share while another one
// waits (the transport's, or a lower one set and lifted at random); the
// shares are work-conserving: while the transport has fewer deliveries in
// flight than its process limit (the driver's agents), mail that could go
// always gets a connection, beyond the urgent reserve if no urgent mail
// waits; a connection the scheduler asks for always carries a request,
// the structures stay consistent (check_invariants after every step, on a
// fake clock), and every recipient finishes.
#include "lanes_workload.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <random>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

// True when some job of lane `urgent` (or, with !urgent, of another lane)
// on `t` has an entry that a destination window would let go now.
bool ready(const Transport& t, bool urgent) {
    for (const Job& j : t.job_list) {
        if ((j.message->lane == Lane::urgent) != urgent) continue;
        for (const Peer& p : j.peers) {
            const Queue& q = *p.queue;
            if (q.select_window() > q.busy_count() && !q.suspended && !q.limits.stopped() &&
                static_cast<int>(p.entries.size()) > (p.held ? 1 : 0))
                return true;
        }
    }
    return false;
}

// What each queue of `t` wanted before a selection, for the shares' rules
// (share.cpp), worked out here from the queues' fields.
struct Wanted {
    bool wants = false; // mail it could send with one more agent, shares aside
    bool waits = false; // the same within its share and its slow start
    bool whole = false; // no share, or its full share, earned
};
std::map<const Queue*, Wanted> wanted(const Transport& t) {
    std::map<const Queue*, Wanted> out;
    int full = share_full(t);
    for (const Queue& q : t.queues_rr) {
        Wanted w;
        int busy = q.busy_count();
        bool mail = q.may_start() && q.todo_count() > q.held;
        w.wants = mail && q.open_window() > busy;
        w.waits = mail && q.select_window() > busy;
        w.whole = q.limits.share <= 0 ||
                  (q.share_earned >= q.limits.share && full > 0 && q.limits.share >= full);
        out[&q] = w;
    }
    return out;
}

// Whether queue `q`, which just went beyond its share (what it earned of
// it) with one more delivery, was allowed to by what the others wanted.
bool beyond_share_allowed(const Queue& q, const std::map<const Queue*, Wanted>& before) {
    bool other_waits = false, other_wants = false, whole_wants = false;
    for (const auto& [other, w] : before) {
        if (other == &q) continue;
        other_waits |= w.waits;
        other_wants |= w.wants;
        whole_wants |= w.wants && w.whole;
    }
    if (q.share_earned < q.limits.share) return !other_wants;      // slow start
    if (!before.at(&q).whole) return !other_waits && !whole_wants; // lowered
    return !other_waits;
}

TEST(LanesProperty, UrgentFirstWithinTheShares) {
    // How often each rule decided a selection, over all seeds: each must
    // have been put to the test.
    int capped_urgent = 0, owed_other = 0, urgent_past_other = 0, beyond_cap = 0;
    int beyond_share = 0;
    for (unsigned seed = 1; seed <= 150; ++seed) {
        std::mt19937 rng(seed);
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
        // The shares draw from a stream of their own, so that the lanes'
        // workloads stay what they were before shares existed.
        std::mt19937 share_rng(seed * 7919);
        auto share_pick = [&](int lo, int hi) {
            return std::uniform_int_distribution<>(lo, hi)(share_rng);
        };
        TransportConfig tc = random_lanes_transport(pick, share_pick);
        SchedulerConfig cfg;
        cfg.message_recipient_limit = pick(20, 200);
        cfg.verify_candidates = true;
        LanesRun run(cfg, tc);
        Scheduler& s = *run.s;
        auto& busy = run.busy;
        const int ndest = pick(1, 4);
        for (int step = 0; step < 600; ++step) {
            int action = pick(0, 9);
            if (step < 400 && action <= 2) {
                // A message: 1 to 5 recipients over 1 or 2 destinations.
                run.add_message(pick, "smtp", ndest);
            } else if (action <= 6) {
                // The driver's bound: no more agents than the process limit.
                Transport& smtp = s.transport("smtp");
                int in_flight =
                    lane_other_busy(smtp) + smtp.lane_busy[static_cast<int>(Lane::urgent)];
                if (tc.process_limit > 0 && in_flight >= tc.process_limit) continue;
                Transport* t = s.select_transport();
                if (!t) {
                    // Work-conserving: an agent is free, so nothing could go.
                    ASSERT_FALSE(ready(smtp, true))
                        << "seed " << seed << " step " << step << ": urgent mail left waiting";
                    ASSERT_FALSE(ready(smtp, false))
                        << "seed " << seed << " step " << step << ": other mail left waiting";
                    continue;
                }
                s.connection_ready(*t);
                bool capped = lane_capped(*t);
                bool owed = lane_owed(*t);
                bool urgent_ready = ready(*t, true);
                bool other_ready = ready(*t, false);
                bool waited = destination_waits(*t);
                auto before = wanted(*t);
                Entry* e = s.select_entry(*t);
                ASSERT_NE(e, nullptr) << "seed " << seed << " step " << step << ": idle connection";
                // Beyond its share only while no destination waited, and
                // by the rule of its kind of share.
                const Queue& q = *e->queue;
                int entitled = std::min(q.limits.share, q.share_earned);
                if (q.limits.share > 0 && q.busy_count() > entitled) {
                    ASSERT_FALSE(waited && !before.at(&q).waits)
                        << "seed " << seed << " step " << step << ": share exceeded";
                    ASSERT_TRUE(beyond_share_allowed(q, before))
                        << "seed " << seed << " step " << step << ": " << q.name
                        << " beyond its share while others wanted agents";
                    beyond_share++;
                }
                bool urgent = e->message->lane == Lane::urgent;
                if (!urgent) {
                    // Past urgent mail only while owed its share, under
                    // the cap; beyond the cap only while no urgent waits.
                    ASSERT_TRUE(!urgent_ready || (owed && !capped))
                        << "seed " << seed << " step " << step << ": urgent mail passed over";
                } else if (owed && !capped) {
                    ASSERT_FALSE(other_ready)
                        << "seed " << seed << " step " << step << ": other mail's share taken";
                }
                capped_urgent += capped && urgent;
                owed_other += owed && !urgent && urgent_ready;
                urgent_past_other += urgent && other_ready;
                beyond_cap += capped && !urgent;
                busy.push_back(e);
            } else if (!busy.empty()) {
                run.finish(static_cast<size_t>(pick(0, static_cast<int>(busy.size()) - 1)));
            }
            if (pick(0, 3) == 0) s.set_time(++run.now);
            if (share_pick(0, 19) == 0)
                s.set_limit(AdminTarget{"smtp", "d" + std::to_string(share_pick(0, ndest - 1)) +
                                                    ".example"},
                            LimitChange::share(share_pick(0, 3)));
            s.check_invariants();
        }
        run.drain(seed);
        ASSERT_EQ(run.finished, run.total) << "seed " << seed;
        ASSERT_EQ(run.drv.done.size(), run.msgs.size()) << "seed " << seed;
    }
    EXPECT_GT(capped_urgent, 0);
    EXPECT_GT(owed_other, 0);
    EXPECT_GT(urgent_past_other, 0);
    EXPECT_GT(beyond_cap, 0);
    EXPECT_GT(beyond_share, 0);
}

} // namespace
