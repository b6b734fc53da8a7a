// Properties of sender groups over random workloads (fixed seeds): no
// group ever has more deliveries in flight in a scope (a destination, or
// the queues of a provider) than its concurrency, nor more starts than its
// rate allows; an agent is asked for whenever some entry could go, and
// then it gets one, whatever the groups at their limits (other senders'
// mail is never held up by them), a second agent asked for before the
// first is ready too; queues join and leave providers as they go; the
// structures stay consistent (check_invariants after every step, the
// preemption index checked against the scan), and every recipient finishes.
// The same with reply rules' bounds on the groups' mail on one queue
// (sender_rule.cpp), set, replaced and removed as the workload goes, each
// ending by its time at the latest: a group never has more deliveries in
// flight on a queue than its rule's cap (the core panics on a start
// beyond it).
#include "lanes_workload.hpp"

#include <gtest/gtest.h>
#include <map>
#include <random>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

// Whether some waiting entry of `t` could go now: its queue has room, its
// group (if any) has room, and it is not held back for a refill.
bool could_go(const Transport& t) {
    for (const Job& j : t.job_list)
        for (const Peer& p : j.peers) {
            const Queue& q = *p.queue;
            if (q.select_window() <= q.busy_count() || q.suspended || q.limits.stopped()) continue;
            if (static_cast<int>(p.entries.size()) <= (p.held ? 1 : 0)) continue;
            if (p.sender) {
                const SenderPart& part = t.senders.part(p.sender);
                if (part.room(t.senders.at(part.load)) <= 0) continue;
            }
            return true;
        }
    return false;
}

// A reply rule's bound drawn with `pick`, ending within a minute of `now`.
RuleLimit random_rule(const Pick& pick, int64_t now) {
    RuleLimit r;
    int kind = pick(0, 2);
    r.hold = kind == 0;
    if (kind == 1) r.concurrency = pick(1, 2);
    if (kind == 2) r.pause = pick(1, 5);
    r.until = now + pick(1, 60);
    return r;
}

// Runs seeds 1 to `seeds`, with reply rules' bounds on the groups when
// `rules`; counts in `stopped_selections` the selections made while some
// group was stopped.
void run_seeds(unsigned seeds, bool rules, int& stopped_selections) {
    for (unsigned seed = 1; seed <= seeds; ++seed) {
        std::mt19937 rng(seed);
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
        TransportConfig tc;
        tc.dest_recipient_limit = pick(1, 3);
        tc.dest_concurrency_limit = pick(1, 8);
        tc.init_dest_concurrency = pick(1, 8);
        tc.slot_cost = pick(1, 6);
        tc.min_slots = pick(1, 3);
        tc.recipient_limit = pick(20, 200);
        tc.fail_cohort_limit = 0;
        SchedulerConfig cfg;
        cfg.message_recipient_limit = pick(20, 200);
        cfg.verify_candidates = true;
        LanesRun run(cfg, tc);
        Scheduler& s = *run.s;
        // Groups 1 to 3 with a concurrency, a rate or both, per
        // destination or per provider; group 4 has none (no group), nor
        // has 0.
        std::map<SenderGroup, SenderLimit> limits;
        for (SenderGroup g = 1; g <= 3; ++g) {
            SenderLimit l;
            int kind = pick(0, 2);
            if (kind != 1) l.concurrency = pick(1, 3);
            if (kind != 0) {
                l.rate_count = pick(1, 4);
                l.rate_period_ms = 1000 * pick(1, 5);
                l.rate_burst = pick(1, 3);
            }
            if (pick(0, 1)) l.per = SenderPer::provider;
            s.set_sender_limit(g, l);
            limits[g] = l;
        }
        // Starts per load (group and scope), by second, for the rate's
        // bound: kept while no queue changed its provider (a queue that
        // joins a provider brings no history of its rate).
        std::map<std::string, std::vector<int64_t>> starts;
        bool rescoped = false;
        const int ndest = pick(1, 3);
        // Providers 1 and 2, or none, for the destinations at their birth.
        for (int d = 0; d < ndest; ++d)
            run.drv.providers["d" + std::to_string(d) + ".example"] =
                static_cast<uint32_t>(pick(0, 2));
        for (int step = 0; step < 600; ++step) {
            int action = pick(0, 9);
            if (step < 400 && action <= 2) {
                run.add_message(pick, "smtp", ndest, static_cast<SenderGroup>(pick(0, 4)));
            } else if (action <= 6) {
                Transport& t = s.transport("smtp");
                bool any = could_go(t);
                Transport* got = s.select_transport();
                ASSERT_EQ(got != nullptr, any) << "seed " << seed << " step " << step;
                if (!got) continue;
                // Sometimes a second agent is asked for before the first is
                // ready: it must find work too.
                Transport* second = pick(0, 2) == 0 ? s.select_transport() : nullptr;
                for (Transport* agent : {got, second}) {
                    if (!agent) continue;
                    s.connection_ready(*agent);
                    bool stopped = false;
                    for (const auto& part : t.senders.parts)
                        stopped |= part && part->todo > part->held &&
                                   part->room(t.senders.at(part->load)) <= 0;
                    Entry* e = s.select_entry(*agent);
                    ASSERT_NE(e, nullptr)
                        << "seed " << seed << " step " << step << ": idle connection";
                    stopped_selections += stopped;
                    if (e->peer->sender)
                        starts[t.senders.at(t.senders.part(e->peer->sender).load).key].push_back(
                            run.now);
                    run.busy.push_back(e);
                }
            } else if (rules && action == 7 && pick(0, 1) == 0) {
                // A rule on a group's mail on a destination, set, replaced
                // or removed (groups 1 to 4: group 4 has no limit).
                AdminTarget target{"smtp", "d" + std::to_string(pick(0, ndest - 1)) + ".example"};
                auto g = static_cast<SenderGroup>(pick(1, 4));
                s.set_sender_rule(target, g,
                                  pick(0, 3) == 0 ? std::nullopt
                                                  : std::optional(random_rule(pick, run.now)));
            } else if (action == 7 && pick(0, 3) == 0) {
                // A destination joins or leaves a provider (its MX answer).
                std::string d = "d" + std::to_string(pick(0, ndest - 1)) + ".example";
                if (Queue* q = s.find_queue("smtp", d)) {
                    s.set_queue_provider(*q, static_cast<uint32_t>(pick(0, 2)));
                    rescoped = true;
                }
            } else if (!run.busy.empty()) {
                run.finish(static_cast<size_t>(pick(0, static_cast<int>(run.busy.size()) - 1)));
            }
            if (pick(0, 3) == 0) s.set_time(++run.now);
            s.check_invariants();
        }
        run.drain(seed);
        ASSERT_EQ(run.finished, run.total) << "seed " << seed;
        ASSERT_EQ(run.drv.done.size(), run.msgs.size()) << "seed " << seed;
        // In any window of W seconds a group started at most
        // burst + rate x W deliveries in a scope.
        for (const auto& [key, times] : starts) {
            if (rescoped) break;
            const SenderLimit& l = limits[static_cast<SenderGroup>(std::stoi(key))];
            if (l.rate_count == 0) continue;
            double per_s =
                static_cast<double>(l.rate_count) * 1000.0 / static_cast<double>(l.rate_period_ms);
            for (size_t i = 0; i < times.size(); ++i)
                for (size_t k = i; k < times.size(); ++k) {
                    double window = static_cast<double>(times[k] - times[i]);
                    ASSERT_LE(static_cast<double>(k - i + 1),
                              static_cast<double>(l.rate_burst) + per_s * window + 1e-9)
                        << "seed " << seed << ": load " << key;
                }
        }
    }
}

TEST(SenderProperty, GroupsKeepTheirLimitsAndNobodyWaitsForThem) {
    int stopped_selections = 0;
    run_seeds(150, false, stopped_selections);
    EXPECT_GT(stopped_selections, 0);
}

TEST(SenderProperty, RulesBoundTheirGroupsAndNobodyElsesMail) {
    int stopped_selections = 0;
    run_seeds(100, true, stopped_selections);
    EXPECT_GT(stopped_selections, 0);
}

} // namespace
