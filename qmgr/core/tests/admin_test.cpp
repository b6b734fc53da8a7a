// Runtime control on a fake clock: the administrator's suspensions and
// concurrency caps, their ends by time, the flush of one destination, and
// settings by bare destination name that reach queues created later; the
// random property test mixes in learned limits (learned_test.cpp) and
// reply rules' actions (rule_limit_test.cpp).
#include "scheduler_fixture.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <random>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

const AdminTarget smtp_d{"smtp", "d.example"};

AdminHold hold_until(int64_t until, const std::string& reason = "") {
    return AdminHold{until, reason, 0};
}

AdminCap cap_of(int concurrency, int64_t until = 0) {
    return AdminCap{concurrency, until, 0};
}

// Selects and delivers entries of `t` until none is left; returns how many.
int deliver_all(Scheduler& s, Transport& t) {
    int n = 0;
    while (Entry* e = s.select_entry(t)) {
        s.delivery_done(e, DeliveryResult{});
        s.check_invariants();
        ++n;
    }
    return n;
}

} // namespace

TEST_F(Fixture, SuspendStopsSelectionAndResumeRestoresIt) {
    tc.dest_recipient_limit = 1;
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(hold_until(0, "maintenance"))));
    message("A", 3, "d.example");
    message("B", 1, "other.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    ASSERT_TRUE(q.limits.hold);
    EXPECT_EQ(q.limits.hold->reason, "maintenance");
    EXPECT_TRUE(q.ready()); // live: a suspension is no rate-delay pause
    EXPECT_FALSE(q.may_start());
    // Only B's destination asks for an agent, and only B's entry goes.
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    Entry* b = s->select_entry(t);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->message->id, "B");
    EXPECT_EQ(s->select_entry(t), nullptr);
    EXPECT_EQ(s->select_transport(), nullptr);
    s->delivery_done(b, DeliveryResult{});
    EXPECT_EQ(s->select_entry(t), nullptr);
    // A's mail waits in the active queue: nothing is deferred or sent to retry.
    EXPECT_EQ(q.todo_count(), 3);
    EXPECT_TRUE(drv.deferred.empty());
    EXPECT_FALSE(s->transports().count("retry"));
    s->check_invariants();

    int wakeups = drv.wakeups;
    EXPECT_TRUE(s->set_limit(smtp_d, LimitChange::hold(std::nullopt)));
    EXPECT_GT(drv.wakeups, wakeups);
    EXPECT_FALSE(s->set_limit(smtp_d, LimitChange::hold(std::nullopt))); // nothing left to resume
    EXPECT_FALSE(q.limits.hold);
    s->check_invariants();
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    EXPECT_EQ(deliver_all(*s, t), 3);
    EXPECT_EQ(drv.done, (std::vector<std::string>{"B", "A"}));
    EXPECT_TRUE(drv.expired.empty());
}

TEST_F(Fixture, SuspendedTransportGetsNoConnectionAndNoEntry) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 2, "d.example");
    Transport& t = s->transport("smtp");
    ASSERT_EQ(s->select_transport(), &t); // granted before the suspension
    ASSERT_TRUE(s->set_limit({"smtp", ""}, LimitChange::hold(hold_until(0))));
    EXPECT_TRUE(t.hold);
    EXPECT_FALSE(t.queue_by_name.at("d.example")->limits.hold); // the transport's, not the queue's
    s->connection_ready(t);
    EXPECT_EQ(s->select_entry(t), nullptr); // its agent gets nothing
    EXPECT_EQ(s->select_transport(), nullptr);
    // Mail for it that comes now waits as well.
    message("B", 1, "e.example");
    EXPECT_EQ(s->select_transport(), nullptr);
    EXPECT_TRUE(drv.deferred.empty());
    s->check_invariants();
    ASSERT_TRUE(s->set_limit({"smtp", ""}, LimitChange::hold(std::nullopt)));
    EXPECT_FALSE(t.hold);
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    EXPECT_EQ(deliver_all(*s, t), 3);
    EXPECT_EQ(drv.done.size(), 2u);
}

TEST_F(Fixture, SuspensionEndsByItself) {
    tc.dest_recipient_limit = 1;
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(hold_until(1600, "for 600s"))));
    EXPECT_FALSE(
        s->set_limit(smtp_d, LimitChange::hold(hold_until(1600, "for 600s")))); // the same again
    message("A", 1, "d.example");
    Transport& t = s->transport("smtp");
    EXPECT_EQ(s->select_transport(), nullptr);
    EXPECT_EQ(s->next_timer(), 1600);
    s->set_time(1599);
    EXPECT_EQ(s->select_transport(), nullptr);
    EXPECT_TRUE(drv.expired.empty());
    s->check_invariants();
    int wakeups = drv.wakeups;
    s->set_time(1600);
    EXPECT_EQ(drv.expired, std::vector<std::string>{"hold smtp:d.example"});
    EXPECT_GT(drv.wakeups, wakeups);
    EXPECT_TRUE(s->limits().holds().empty());
    EXPECT_FALSE(t.queue_by_name.at("d.example")->limits.hold);
    s->check_invariants();
    EXPECT_EQ(s->select_transport(), &t);
    s->connection_ready(t);
    EXPECT_EQ(deliver_all(*s, t), 1);
}

TEST_F(Fixture, ReplacedOrResumedSuspensionIgnoresItsOldTimer) {
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(hold_until(1600))));
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(hold_until(2000, "longer"))));
    s->set_time(1600);
    EXPECT_TRUE(drv.expired.empty());
    EXPECT_EQ(s->limits().holds().at(smtp_d).reason, "longer");
    s->check_invariants();
    s->set_time(2000);
    EXPECT_EQ(drv.expired.size(), 1u);
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(hold_until(2500))));
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(std::nullopt)));
    s->set_time(2500);
    EXPECT_EQ(drv.expired.size(), 1u); // resumed before its end: no notice
    s->check_invariants();
}

TEST_F(Fixture, CapLimitsBusyCountAndFeedbackGoesOn) {
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 5;
    tc.dest_concurrency_limit = 20;
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::cap(cap_of(2))));
    message("A", 20, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    EXPECT_EQ(q.window, 5);
    EXPECT_EQ(q.select_window(), 2);
    // Two agents are asked for, not five.
    std::vector<Entry*> busy;
    for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(s->select_transport(), &t);
        s->connection_ready(t);
        busy.push_back(s->select_entry(t));
        ASSERT_TRUE(busy.back());
    }
    EXPECT_EQ(s->select_transport(), nullptr);
    EXPECT_EQ(s->select_entry(t), nullptr);
    EXPECT_EQ(q.busy_count(), 2);
    s->check_invariants();
    // Successes still move the window; the cap still bounds selection.
    for (int round = 0; round < 5; ++round) {
        s->delivery_done(busy.front(), DeliveryResult{});
        busy.erase(busy.begin());
        Entry* e = s->select_entry(t);
        ASSERT_TRUE(e);
        busy.push_back(e);
        EXPECT_EQ(s->select_entry(t), nullptr);
        EXPECT_LE(q.busy_count(), 2);
        s->check_invariants();
    }
    EXPECT_GT(q.window, 5);
    // Without the cap, selection goes up to the window at once.
    int window = q.window;
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::cap(std::nullopt)));
    EXPECT_FALSE(s->set_limit(smtp_d, LimitChange::cap(std::nullopt)));
    EXPECT_FALSE(q.limits.cap);
    while (Entry* e = s->select_entry(t))
        busy.push_back(e);
    EXPECT_EQ(q.busy_count(), window);
    s->check_invariants();
    for (Entry* e : busy)
        s->delivery_done(e, DeliveryResult{});
    EXPECT_EQ(deliver_all(*s, t), 20 - 7 - window + 2);
    EXPECT_EQ(drv.done, std::vector<std::string>{"A"});
}

TEST_F(Fixture, CapEndsByItselfAndFreesTheWaitingJob) {
    tc.dest_recipient_limit = 1;
    make();
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::cap(cap_of(1, 1300))));
    message("A", 3, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    ASSERT_TRUE(s->select_entry(t));
    EXPECT_EQ(s->select_entry(t), nullptr); // A waits for the capped queue
    s->set_time(1300);
    EXPECT_EQ(drv.expired, std::vector<std::string>{"cap smtp:d.example"});
    EXPECT_FALSE(q.limits.cap);
    EXPECT_TRUE(s->select_entry(t));
    EXPECT_TRUE(s->select_entry(t));
    EXPECT_EQ(q.busy_count(), 3);
    s->check_invariants();
}

TEST_F(Fixture, DeliveriesInFlightOnASuspendedQueueStillGiveFeedback) {
    tc.dest_recipient_limit = 1;
    tc.fail_cohort_limit = 0; // never dead, so that the window shows the feedback
    make();
    message("A", 4, "d.example");
    Transport& t = s->transport("smtp");
    Queue& q = *t.queue_by_name.at("d.example");
    Entry* e1 = s->select_entry(t);
    Entry* e2 = s->select_entry(t);
    ASSERT_TRUE(e1 && e2);
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(hold_until(0))));
    int window = q.window;
    s->delivery_done(e1, DeliveryResult{DeliveryResult::Kind::replied, 1, {"4.4.1", "refused"}});
    EXPECT_LT(q.window, window);
    EXPECT_TRUE(q.ready());
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->delivery_done(e2, DeliveryResult{});
    EXPECT_EQ(q.todo_count(), 2);
    s->check_invariants();
}

TEST_F(Fixture, SuspendedQueueLetGoWhenEmptyIsSuspendedAgainWhenRecreated) {
    Entry* e = first_entry_of_a(1, "d.example");
    ASSERT_TRUE(e);
    Transport& t = s->transport("smtp");
    ASSERT_TRUE(s->set_limit(smtp_d, LimitChange::hold(hold_until(0, "r"))));
    EXPECT_TRUE(e->queue->limits.hold);
    s->delivery_done(e, DeliveryResult{});
    EXPECT_FALSE(t.queue_by_name.count("d.example"));
    message("B", 1, "d.example");
    ASSERT_TRUE(t.queue_by_name.at("d.example")->limits.hold);
    EXPECT_EQ(t.queue_by_name.at("d.example")->limits.hold->reason, "r");
    EXPECT_EQ(s->select_entry(t), nullptr);
    s->check_invariants();
}

TEST_F(Fixture, FlushRevivesADeadDestination) {
    kill_destination("down.example", 3);
    Transport& t = s->transport("smtp");
    const AdminTarget down{"smtp", "down.example"};
    ASSERT_TRUE(t.queue_by_name.at("down.example")->dead());
    int wakeups = drv.wakeups;
    std::vector<AdminTarget> revived = s->admin_flush(down);
    ASSERT_EQ(revived.size(), 1u);
    EXPECT_EQ(revived[0].text(), "smtp:down.example");
    EXPECT_GT(drv.wakeups, wakeups);
    // It had nothing left (its mail went to retry): let go, and new mail
    // finds it live again, with its cohort count started afresh.
    EXPECT_FALSE(t.queue_by_name.count("down.example"));
    message("B", 1, "down.example");
    Queue& q = *t.queue_by_name.at("down.example");
    EXPECT_TRUE(q.ready());
    EXPECT_EQ(q.fail_cohorts, 0);
    EXPECT_EQ(q.window, 1); // init_dest_concurrency
    s->check_invariants();
    // The old revival timer finds nothing to do.
    s->set_time(1000 + cfg.minimal_backoff_time);
    EXPECT_TRUE(q.ready());
    s->check_invariants();
    // A live destination has nothing to revive.
    EXPECT_TRUE(s->admin_flush(down).empty());
}

TEST_F(Fixture, FlushRevivesTheNamedDeadTransport) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 1, "d.example");
    Transport& t = s->transport("smtp");
    ASSERT_EQ(s->select_transport(), &t);
    s->connection_failed(t, transport_unavailable());
    ASSERT_TRUE(t.dead);
    std::vector<AdminTarget> revived = s->admin_flush(smtp_d);
    ASSERT_EQ(revived.size(), 1u);
    EXPECT_EQ(revived[0].text(), "smtp");
    EXPECT_FALSE(t.dead);
    s->check_invariants();
}

TEST_F(Fixture, BareDestinationSettingsReachQueuesCreatedLater) {
    tc.dest_recipient_limit = 1;
    make();
    // As after a restart: the settings come before any mail.
    ASSERT_TRUE(s->set_limit({"", "late.example"}, LimitChange::hold(hold_until(0, "bare"))));
    ASSERT_TRUE(s->set_limit({"", "capped.example"}, LimitChange::cap(cap_of(1))));
    message("A", 2, "late.example", "smtp");
    message("B", 2, "late.example", "relay");
    message("C", 3, "capped.example", "smtp");
    Transport& smtp = s->transport("smtp");
    Transport& relay = s->transport("relay");
    Queue& smtp_late = *smtp.queue_by_name.at("late.example");
    Queue& relay_late = *relay.queue_by_name.at("late.example");
    EXPECT_TRUE(smtp_late.limits.hold && relay_late.limits.hold);
    EXPECT_EQ(smtp.queue_by_name.at("capped.example")->select_window(), 1);
    EXPECT_EQ(s->admin_queues({"", "late.example"}).size(), 2u);
    EXPECT_EQ(s->select_entry(relay), nullptr);
    Entry* c = s->select_entry(smtp);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->message->id, "C");
    EXPECT_EQ(s->select_entry(smtp), nullptr);
    s->check_invariants();
    // A queue's own setting comes before the one for its bare name.
    ASSERT_TRUE(s->set_limit({"smtp", "late.example"}, LimitChange::hold(hold_until(0, "own"))));
    EXPECT_EQ(smtp_late.limits.hold->reason, "own");
    EXPECT_EQ(relay_late.limits.hold->reason, "bare");
    ASSERT_TRUE(s->set_limit({"", "late.example"}, LimitChange::hold(std::nullopt)));
    EXPECT_FALSE(relay_late.limits.hold);
    ASSERT_TRUE(smtp_late.limits.hold);
    EXPECT_EQ(smtp_late.limits.hold->reason, "own");
    s->check_invariants();
    EXPECT_EQ(deliver_all(*s, relay), 2);
    EXPECT_EQ(s->select_entry(smtp), nullptr);
}

TEST_F(Fixture, NoSettingsNoCopies) {
    make();
    message("A", 3, "d.example");
    Queue& q = *s->transport("smtp").queue_by_name.at("d.example");
    EXPECT_FALSE(q.limits.hold || q.limits.cap || s->transport("smtp").hold);
    EXPECT_EQ(q.select_window(), q.window);
    EXPECT_TRUE(s->limits().holds().empty() && s->limits().caps().empty());
}

// Random deliveries, outcomes, time steps and commands: the invariants hold
// after every step, nothing is selected where a setting forbids it, and
// once every setting is gone all mail is delivered.
TEST(AdminProperty, RandomCommandsKeepInvariantsAndLoseNothing) {
    for (unsigned seed = 1; seed <= 60; ++seed) {
        std::mt19937 rng(seed);
        auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
        std::vector<std::unique_ptr<Message>> msgs; // outlive the scheduler
        FakeDriver drv;
        TransportConfig tc;
        tc.dest_recipient_limit = pick(1, 3);
        tc.init_dest_concurrency = pick(1, 4);
        tc.dest_concurrency_limit = pick(0, 6);
        tc.fail_cohort_limit = pick(0, 2);
        SchedulerConfig cfg;
        cfg.minimal_backoff_time = 30;
        cfg.transport_retry_time = 20;
        Scheduler s(
            cfg, [&](const std::string&) { return tc; }, drv);
        drv.sched = &s;
        int64_t now = 1000;
        s.set_time(now);
        const std::vector<std::string> transports{"smtp", "relay"};
        const std::vector<std::string> dests{"a.example", "b.example", "c.example"};
        auto random_target = [&]() -> AdminTarget {
            switch (pick(0, 2)) {
            case 0:
                return {transports[pick(0, 1)], {}};
            case 1:
                return {transports[pick(0, 1)], dests[pick(0, 2)]};
            default:
                return {{}, dests[pick(0, 2)]};
            }
        };
        std::vector<Entry*> busy;
        int created = 0; // messages
        auto check_selected = [&](Entry* e) {
            Queue& q = *e->queue;
            ASSERT_FALSE(q.limits.hold) << "seed " << seed;
            ASSERT_FALSE(q.limits.stopped()) << "seed " << seed;
            ASSERT_FALSE(q.transport->hold) << "seed " << seed;
            ASSERT_LE(q.busy_count(), q.select_window()) << "seed " << seed;
        };
        for (int step = 0; step < 400; ++step) {
            switch (pick(0, 9)) {
            case 0:
            case 1: { // a new message
                auto m = std::make_unique<Message>();
                m->id = "m" + std::to_string(step);
                ++created;
                s.message_add(*m);
                int n = pick(1, 5);
                for (int i = 0; i < n; ++i) {
                    Transport& t = s.transport(transports[pick(0, 1)]);
                    const std::string& d = dests[pick(0, 2)];
                    Dsn why;
                    Queue* q = s.route(t, d, d, why);
                    if (!q) continue; // deferred by the driver (retry dead too)
                    s.assign(*m, *q, rcpt(m->id + "-" + std::to_string(i) + "@" + d));
                }
                s.batch_done(*m, false, 0);
                if (m->refcount == 0) drv.message_done(*m);
                msgs.push_back(std::move(m));
                break;
            }
            case 2:
            case 3: { // an agent asks for an entry
                for (auto& [name, t] : s.transports())
                    if (pick(0, 1))
                        if (Entry* e = s.select_entry(*t)) {
                            check_selected(e);
                            busy.push_back(e);
                        }
                break;
            }
            case 4:
            case 5: { // a delivery ends
                if (busy.empty()) break;
                size_t i = static_cast<size_t>(pick(0, static_cast<int>(busy.size()) - 1));
                Entry* e = busy[i];
                busy.erase(busy.begin() + static_cast<long>(i));
                int outcome = pick(0, 5);
                DeliveryResult r;
                if (outcome == 0) r = {DeliveryResult::Kind::replied, 1, {"4.4.1", "refused"}};
                if (outcome == 1) r = {DeliveryResult::Kind::crashed, -1, {}};
                s.delivery_done(e, r);
                break;
            }
            case 6: // time passes
                now += pick(0, 25);
                s.set_time(now);
                break;
            case 7: {
                AdminTarget target = random_target();
                if (pick(0, 3) == 0) { // a reply rule acts (RuleLimit)
                    if (target.transport.empty()) target.transport = transports[pick(0, 1)];
                    RuleLimit r;
                    r.concurrency = pick(0, 2);
                    r.pause = pick(0, 1) * pick(1, 20);
                    r.hold = pick(0, 1) == 1 || (r.concurrency == 0 && r.pause == 0);
                    r.until = pick(0, 1) ? now + pick(1, 60) : 0;
                    s.set_limit(target,
                                LimitChange::rule(pick(0, 2) ? std::optional(r) : std::nullopt));
                } else if (pick(0, 1))
                    s.set_limit(target,
                                LimitChange::hold(hold_until(pick(0, 1) ? now + pick(1, 60) : 0)));
                else
                    s.set_limit(target, LimitChange::hold(std::nullopt));
                break;
            }
            case 8: {
                AdminTarget target = random_target();
                if (target.queue.empty()) target.queue = dests[pick(0, 2)];
                if (pick(0, 2) == 0) { // the adaptive limits learn (learned.hpp)
                    if (target.transport.empty()) target.transport = transports[pick(0, 1)];
                    // A window's quota, and its hold while it is spent.
                    int quota = pick(0, 1) * pick(1, 5);
                    s.set_limit(target, LimitChange::learned(LearnedLimit{
                                            pick(0, 3), pick(0, 1) * pick(1, 20), quota,
                                            quota ? 61 : 0, pick(0, 1) ? now + pick(1, 60) : 0}));
                } else if (pick(0, 1))
                    s.set_limit(target, LimitChange::cap(cap_of(
                                            pick(1, 3), pick(0, 1) ? now + pick(1, 60) : 0)));
                else
                    s.set_limit(target, LimitChange::cap(std::nullopt));
                break;
            }
            default:
                s.admin_flush(random_target());
                break;
            }
            s.check_invariants();
            if (::testing::Test::HasFatalFailure()) return;
        }
        // Every setting gone, every delivery through: all mail finishes.
        for (auto [target, hold] : std::map(s.limits().holds()))
            s.set_limit(target, LimitChange::hold(std::nullopt));
        for (auto [target, cap] : std::map(s.limits().caps()))
            s.set_limit(target, LimitChange::cap(std::nullopt));
        for (auto [target, limit] : std::map(s.limits().learned()))
            s.set_limit(target, LimitChange::learned(LearnedLimit{}));
        for (auto [target, rule] : std::map(s.limits().rules()))
            s.set_limit(target, LimitChange::rule(std::nullopt));
        for (Entry* e : busy)
            s.delivery_done(e, DeliveryResult{});
        for (int round = 0; round < 100 && s.recipient_count() > 0; ++round) {
            s.set_time(now += 30); // learned pauses end
            s.flush_dead();
            for (auto& [name, t] : s.transports())
                deliver_all(s, *t);
        }
        ASSERT_EQ(s.recipient_count(), 0) << "seed " << seed;
        EXPECT_EQ(static_cast<int>(drv.done.size()), created) << "seed " << seed;
        s.check_invariants();
    }
}
