// ClusterLimits on a deterministic fake of the shared state: hosts (each a
// scheduler, its cluster limits and its connection to one FakeStore) that
// start and end deliveries while the test orders the store's steps, its
// answers and the connection's ups and downs.  After every step the
// cluster's invariant is checked: the deliveries in flight to a scope, on
// all hosts together, and the leases the store holds never exceed the
// limit.
#include "cluster_limits.hpp"
#include "fake_shared_state.hpp"
#include "smtp_mail.hpp"
#include "test_params.hpp"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <limits>

namespace cqmgr::qmgr {
namespace {

using namespace std::chrono_literals;
using testing::FakeShared;
using testing::FakeStore;

const std::string dest = "d.example";

// One sending host.
// The parameters of `main_cf`, with a lease time of `lease_time` seconds
// when given (main.cf allows no less than 3).
conf::QmgrParams host_params(const std::string& main_cf, int lease_time) {
    conf::QmgrParams p = testing::params(main_cf);
    if (lease_time > 0) p.cqmgr_cluster_lease_time = lease_time;
    return p;
}

struct Host : core::Driver {
    Host(asio::io_context& io, FakeStore& store, const std::string& main_cf, int lease_time = 0)
        : params(host_params(main_cf, lease_time)), sched(
                                                        core::SchedulerConfig{},
                                                        [this](const std::string&) {
                                                            core::TransportConfig tc;
                                                            tc.dest_recipient_limit = 1;
                                                            tc.init_dest_concurrency = window;
                                                            tc.dest_concurrency_limit = 0;
                                                            tc.fail_cohort_limit = 1;
                                                            return tc;
                                                        },
                                                        *this),
          limits(io, params, ClusterLimits::open_tables(params), sched) {
        auto f = std::make_unique<FakeShared>(store);
        shared = f.get();
        limits.use_shared(std::move(f));
        sched.set_time(1000);
        limits.start();
    }

    // `n` one-recipient entries of a new message for `queue`.
    void mail(int n, const std::string& queue = dest) { testing::smtp_mail(sched, msgs, n, queue); }
    // As Delivery::pump: the limits ask for what is wanted, then agents
    // take what the gates allow.
    void pump() {
        woken = false;
        limits.refresh();
        while (core::Transport* t = sched.select_transport()) {
            sched.connection_ready(*t);
            core::Entry* e = sched.select_entry(*t);
            if (!e) break;
            limits.started(*e->queue);
            busy.push_back(e);
        }
    }
    // The oldest delivery in flight to `queue` ends (as Delivery::report).
    void end(const std::string& queue = dest, bool ok = true) {
        auto it = std::find_if(busy.begin(), busy.end(),
                               [&](core::Entry* e) { return e->queue->name == queue; });
        ASSERT_NE(it, busy.end()) << "nothing in flight to " << queue;
        core::Entry* e = *it;
        busy.erase(it);
        std::string t = e->queue->transport->name, q = e->queue->name;
        core::DeliveryResult r;
        if (!ok) r = {core::DeliveryResult::Kind::replied, 1, {"4.4.1", "connection refused"}};
        sched.delivery_done(e, r);
        limits.finished(t, q);
    }
    int in_flight(const std::string& queue = dest) const {
        return static_cast<int>(std::count_if(
            busy.begin(), busy.end(), [&](core::Entry* e) { return e->queue->name == queue; }));
    }
    core::Queue* queue(const std::string& name = dest) { return sched.find_queue("smtp", name); }

    // core::Driver
    void refill(core::Message&, int) override {}
    void message_done(core::Message& m) override { sched.message_free(m); }
    void defer_recipients(core::Message&, const std::vector<core::Recipient>&,
                          const core::Dsn&) override {}
    void wakeup() override { woken = true; }
    std::optional<int> queue_gate(const core::Queue& q) override { return limits.queue_gate(q); }
    void queue_freed(const core::Queue& q) override { limits.queue_freed(q); }
    void queue_window(const core::Queue& q, bool positive) override {
        if (!positive && q.dead() && q.dsn)
            limits.queue_dead(q);
        else if (positive)
            limits.queue_revived(q);
    }

    int window = 5;      // of each queue (read when its transport is made)
    bool manual = false; // the test pumps this host itself
    conf::QmgrParams params;
    core::Scheduler sched;
    ClusterLimits limits;
    FakeShared* shared = nullptr;
    std::vector<std::unique_ptr<core::Message>> msgs;
    std::vector<core::Entry*> busy;
    bool woken = false;
};

class ClusterLimitsTest : public ::testing::Test {
  protected:
    // A host whose concurrency limit for d.example is `limit`, connected.
    Host& host(int limit = 2, const std::string& extra = "", int lease_time = 0) {
        std::string main_cf = "myhostname = host" + std::to_string(hosts.size()) +
                              ".example\n" // (lease ids)
                              "cqmgr_redis_server = fake\n"
                              "cqmgr_cluster_lease_time = 3s\n"
                              "cqmgr_cluster_concurrency_limits = inline:{ " +
                              dest + "=" + std::to_string(limit) + " }\n" + extra;
        hosts.push_back(std::make_unique<Host>(io, store, main_cf, lease_time));
        this->limit = limit;
        hosts.back()->shared->connect();
        settle();
        return *hosts.back();
    }

    // A host (limit 2, window 1) whose one delivery to d.example failed:
    // a whole failed cohort, so d.example is dead there.
    Host& killed_host() {
        Host& a = host(2);
        a.window = 1;
        a.mail(1);
        a.pump();
        settle();
        EXPECT_EQ(a.in_flight(), 1);
        a.end(dest, false);
        settle();
        return a;
    }
    // The cluster's invariant.
    void check() {
        int flying = 0;
        for (auto& h : hosts)
            flying += h->in_flight();
        max_in_flight = std::max(max_in_flight, flying);
        if (broken) return; // said once
        broken = flying > limit || store.peak[dest] > limit;
        EXPECT_LE(flying, limit) << "deliveries in flight to " << dest << " on all hosts";
        EXPECT_LE(store.peak[dest], limit) << "leases in the store";
    }
    // Runs what is pending (notices, steps, answers, timers due, pumps)
    // until nothing is left.
    // With `notices` false, the connection's state changes wait.
    void settle(bool notices = true) {
        for (int round = 0; round < 10000; round++) {
            bool more = false;
            for (auto& h : hosts) {
                while (notices && h->shared->deliver_notice())
                    more = true;
                while (h->shared->process())
                    more = true;
                while (h->shared->deliver())
                    more = true;
            }
            more |= io.poll() > 0;
            for (auto& h : hosts)
                if (h->woken && !h->manual) {
                    h->pump();
                    more = true;
                }
            check();
            if (!more) return;
        }
        ADD_FAILURE() << "never settled";
    }
    // Runs timers and everything pending until `done()` holds (within 10 s,
    // however loaded the machine): for what must happen after the 10 ms
    // linger or a retry.
    bool wait_until(const std::function<bool()>& done) {
        auto end = std::chrono::steady_clock::now() + 10s;
        while (!done() && std::chrono::steady_clock::now() < end) {
            io.run_for(2ms);
            settle();
        }
        return done();
    }
    // Lets timers run for `d`, settling all along: for what must not happen.
    void wait(std::chrono::milliseconds d, bool notices = true) {
        auto end = std::chrono::steady_clock::now() + d;
        while (std::chrono::steady_clock::now() < end) {
            io.run_for(2ms);
            settle(notices);
        }
    }
    // Every host's connection drops (Redis went away), and they hear of it.
    void all_down() {
        for (auto& h : hosts)
            h->shared->disconnect();
        settle();
    }
    int leases_in_store() { return store.live(dest); }

    asio::io_context io;
    FakeStore store;
    std::vector<std::unique_ptr<Host>> hosts;
    int limit = 0;
    int max_in_flight = 0;
    bool broken = false;
};

TEST_F(ClusterLimitsTest, LeasesBoundTheDeliveriesInFlight) {
    Host& a = host(2);
    a.mail(6);
    a.pump();
    settle();
    EXPECT_EQ(a.in_flight(), 2);
    EXPECT_EQ(leases_in_store(), 2);
    // Each that ends: its lease is kept (after the linger) for the next one.
    for (int ended = 1; ended <= 6; ended++) {
        a.end();
        ASSERT_TRUE(wait_until([&] { return a.in_flight() == std::min(2, 6 - ended); }));
    }
    // Nothing waits any more: every lease went back.
    EXPECT_TRUE(wait_until([&] { return leases_in_store() == 0; }));
    EXPECT_EQ(a.shared->acquires, 2);
}

TEST_F(ClusterLimitsTest, TwoHostsShareTheLimit) {
    Host& a = host(2);
    Host& b = host(2);
    a.mail(4);
    b.mail(4);
    a.pump();
    b.pump();
    settle();
    EXPECT_EQ(a.in_flight() + b.in_flight(), 2);
    for (int ended = 1; ended <= 8; ended++) {
        Host& h = a.in_flight() > 0 ? a : b;
        h.end();
        // After the linger, and a full host's retry.
        ASSERT_TRUE(
            wait_until([&] { return a.in_flight() + b.in_flight() == std::min(2, 8 - ended); }));
    }
    EXPECT_EQ(a.in_flight() + b.in_flight(), 0);
    EXPECT_EQ(max_in_flight, 2);
}

TEST_F(ClusterLimitsTest, AHostAtTheLimitAsksForNoMoreLeases) {
    // Its window (5) has room, the limit (2) has not: asking again and
    // again for a lease it may not have only loads the store.
    Host& a = host(2);
    a.mail(6);
    a.pump();
    settle();
    ASSERT_EQ(a.in_flight(), 2);
    int asked = a.shared->acquires;
    wait(150ms);
    EXPECT_EQ(a.shared->acquires, asked);
}

TEST_F(ClusterLimitsTest, ADeliveryEndingBeforeTheReconnectIsHeardOfAsksNothingNew) {
    // Redis restarts empty.  The client is up again, but the host has not
    // heard of it yet when a delivery ends: it must not take a new lease
    // before it has told the new Redis of the two it holds.
    Host& a = host(2);
    a.mail(6);
    a.pump();
    settle();
    ASSERT_EQ(a.in_flight(), 2);
    a.shared->disconnect();
    a.shared->deliver_notice();
    store.restart();
    a.shared->connect(); // the notice waits while timers and a delivery's end come
    a.end();
    wait(150ms, false);
    settle();
    wait(30ms);
    EXPECT_LE(leases_in_store(), 2);
    EXPECT_LE(store.peak[dest], 2);
}

TEST_F(ClusterLimitsTest, AnOutageAdmitsNoMoreThanTheLeasesHeld) {
    // A holds both leases; B waits for one.  Redis goes away: B may not
    // start on a limit of its own while A's leases still count.
    Host& a = host(2);
    Host& b = host(2);
    a.mail(6);
    a.pump();
    settle();
    b.mail(6);
    b.pump();
    settle();
    ASSERT_EQ(a.in_flight(), 2);
    ASSERT_EQ(b.in_flight(), 0);
    all_down();
    b.pump();
    settle();
    EXPECT_EQ(b.in_flight(), 0);
    // A goes on with the leases it holds.
    a.end();
    EXPECT_TRUE(wait_until([&] { return a.in_flight() == 2; }));
    // Redis is back, empty: A tells it of its leases; B gets none.
    store.restart();
    for (auto& h : hosts)
        h->shared->connect();
    settle();
    b.pump();
    settle();
    EXPECT_LE(a.in_flight() + b.in_flight(), 2);
    EXPECT_LE(store.peak[dest], 2);
}

TEST_F(ClusterLimitsTest, AwayForALeaseTimeEachHostKeepsTheLimitAlone) {
    // A lease counts for a lease time after its last renewal was sent; then
    // it has expired in Redis too, and the host applies the limit alone.
    // Back, it tells the cluster of the deliveries it started meanwhile, as
    // far as the limit goes, before it asks for anything new.
    Host& a = host(3, "", 1);
    a.mail(6);
    a.pump();
    settle();
    ASSERT_EQ(a.in_flight(), 3);
    a.shared->disconnect();
    settle();
    a.end();
    EXPECT_TRUE(wait_until([&] { return a.in_flight() == 3; })); // on the lease it holds
    wait(1100ms);
    a.end();
    a.end();
    EXPECT_TRUE(wait_until([&] { return a.in_flight() == 3; })); // on its own count of 3
    // Redis is back, empty, and another host holds one lease there already.
    store.restart();
    store.fence(1000);
    store.leases[dest]["other"] = store.now + 60'000;
    a.shared->connect();
    settle();
    EXPECT_EQ(leases_in_store(), 3);  // 2 of its 3 deliveries, and the other host's
    EXPECT_EQ(a.shared->acquires, 3); // the first three only: nothing new meanwhile
    a.end();
    EXPECT_TRUE(wait_until([&] { return a.in_flight() == 2; })); // its 2 leases, both in use again
}

TEST_F(ClusterLimitsTest, AFailoverThatLostALeaseDoesNotGiveItToAnotherHost) {
    // The replica saw A's first lease but not its second.  After the
    // failover B reaches the new master first: the lease A still uses must
    // not go to B.
    Host& a = host(2);
    Host& b = host(2);
    a.mail(1);
    a.pump();
    settle();
    ASSERT_EQ(a.in_flight(), 1);
    FakeStore replica = store;
    a.mail(1);
    a.pump();
    settle();
    ASSERT_EQ(a.in_flight(), 2);
    b.mail(3);
    b.pump();
    settle();
    ASSERT_EQ(b.in_flight(), 0);
    all_down();
    store.fail_over_to(replica);
    b.shared->connect();
    settle();
    b.pump();
    settle();
    a.shared->connect();
    settle();
    EXPECT_LE(a.in_flight() + b.in_flight(), 2);
    EXPECT_LE(leases_in_store(), 2);
}

TEST_F(ClusterLimitsTest, AQueueFreedByItsRevivalTimerTakesItsGateAlong) {
    // A delivery fails and kills the destination (a failed cohort); its
    // revival timer finds nothing to do and frees the queue.
    Host& a = killed_host();
    wait(30ms);
    ASSERT_TRUE(a.queue() && a.queue()->dead());
    EXPECT_EQ(a.limits.gate_count(), 1u);
    a.sched.set_time(a.sched.now() + 3600);
    ASSERT_EQ(a.queue(), nullptr);
    EXPECT_EQ(a.limits.gate_count(), 0u);
    EXPECT_TRUE(wait_until([&] { return leases_in_store() == 0; }));
}

TEST_F(ClusterLimitsTest, AQueueFreedWhileHoldingALeaseGivesItBack) {
    // A lease is held for waiting mail, then the queue is declared dead (a
    // shared dead mark): its mail goes to retry, and its revival frees it.
    Host& a = host(2);
    a.manual = true; // the lease is granted, the mail not yet taken
    a.mail(1);
    settle();
    a.limits.refresh();
    settle();
    ASSERT_EQ(leases_in_store(), 1);
    a.sched.queue_mark_dead(*a.queue(), core::Dsn{"4.4.1", "dead elsewhere"}, a.sched.now() + 10);
    settle();
    a.sched.set_time(a.sched.now() + 3600);
    ASSERT_EQ(a.queue(), nullptr);
    EXPECT_EQ(a.limits.gate_count(), 0u);
    // (Given back after the linger.)
    EXPECT_TRUE(wait_until([&] { return leases_in_store() == 0; }));
}

TEST_F(ClusterLimitsTest, ASuspendedQueueHoldsNoLease) {
    // With a cluster-wide limit of 1, a lease kept by a suspended queue
    // would stop every other host for as long as the suspension lasts.
    Host& a = host(1);
    Host& b = host(1);
    a.mail(3);
    a.pump();
    settle();
    ASSERT_EQ(a.in_flight(), 1);
    a.sched.set_limit(core::AdminTarget{"smtp", dest}, core::LimitChange::hold(core::AdminHold{}));
    a.end();
    EXPECT_TRUE(wait_until([&] { return leases_in_store() == 0; }));
    b.mail(1);
    b.pump();
    settle();
    EXPECT_TRUE(wait_until([&] { return b.in_flight() == 1; }));
}

TEST_F(ClusterLimitsTest, ANonsenseRetryTimeDoesNotSpinOnTheStore) {
    for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity(), 1e300, -1e300}) {
        hosts.clear();
        Host& a = host(2, "cqmgr_rate_limits = inline:{ r.example=1/s }\n");
        a.shared->rate_answer = cluster::RateAnswer{false, false, bad, 0};
        a.mail(1, "r.example");
        a.pump();
        settle();
        wait(100ms);
        EXPECT_LE(a.shared->rate_takes, 3) << bad;
    }
}

TEST_F(ClusterLimitsTest, AQueueFirstSeenTakesUpTheSharedMarkWithoutPublishingItAgain) {
    // Another host marked d.example dead for 29.5 s more.  The queue made
    // here reads the mark before anything starts, is declared dead until
    // the mark's end, and leaves the mark as it is (publishing the death
    // it was told of would round it up to 30 s).
    Host& a = host(2);
    const std::string key = "smtp:" + dest;
    const double until = store.now + 29'500;
    store.dead[key] = {"4.4.1\tdead elsewhere", until};
    a.mail(2);
    a.pump();
    settle();
    ASSERT_NE(a.queue(), nullptr);
    EXPECT_TRUE(a.queue()->dead());
    ASSERT_TRUE(a.queue()->dsn.has_value());
    EXPECT_EQ(a.queue()->dsn->reason, "dead elsewhere");
    EXPECT_EQ(a.in_flight(), 0);
    ASSERT_TRUE(store.dead.contains(key));
    EXPECT_EQ(store.dead[key].second, until);
}

TEST_F(ClusterLimitsTest, ADeathHereIsMarkedInTheStoreAndItsRevivalClearsTheMark) {
    Host& a = killed_host();
    const std::string key = "smtp:" + dest;
    ASSERT_TRUE(a.queue() && a.queue()->dead());
    ASSERT_TRUE(store.dead.contains(key));
    EXPECT_EQ(store.dead[key].first, "4.4.1\tdelivery temporarily suspended: connection refused");
    a.sched.set_time(a.sched.now() + 3600); // revived (and freed: nothing waits)
    settle();
    EXPECT_FALSE(store.dead.contains(key));
}

TEST_F(ClusterLimitsTest, AMarkThatCannotBeReadHoldsNothingBack) {
    // Redis goes away while the mark of a new queue is being read: the
    // read fails, the queue is taken as not marked, and (no limit covers
    // it) its gate goes and its mail flows.
    Host& a = host(2);
    a.mail(2, "other.example");
    EXPECT_EQ(a.limits.gate_count(), 1u); // for the mark only, closed meanwhile
    EXPECT_EQ(a.in_flight("other.example"), 0);
    a.shared->disconnect();
    settle();
    EXPECT_EQ(a.limits.gate_count(), 0u);
    EXPECT_EQ(a.in_flight("other.example"), 2);
}

TEST_F(ClusterLimitsTest, ABadLimitIsLeftOutAndItsQueueIsNotGated) {
    // A value that is no concurrency: logged and left out, as if the
    // table had no entry for the destination.
    hosts.push_back(std::make_unique<Host>(io, store,
                                           "myhostname = host0.example\n"
                                           "cqmgr_redis_server = fake\n"
                                           "cqmgr_cluster_concurrency_limits = inline:{ " +
                                               dest + "=lots }\n"));
    Host& a = *hosts.back();
    limit = 3; // (the invariant's bound: the mail there is)
    a.shared->connect();
    settle();
    a.mail(3);
    a.pump();
    settle();
    EXPECT_EQ(a.limits.gate_count(), 0u);
    EXPECT_EQ(a.in_flight(), 3);
    EXPECT_EQ(a.shared->acquires, 0);
}

// What cqmgrctl explain shows of a gate: its scope and limit, the leases
// held here, and the rate.
TEST_F(ClusterLimitsTest, TheGateViewShowsTheLeasesHeldHere) {
    Host& a = host(2, "cqmgr_rate_limits = inline:{ d.example=600/1m }\n");
    a.mail(6);
    a.pump();
    settle();
    ASSERT_TRUE(wait_until([&] { return a.in_flight() == 2; }));
    auto v = a.limits.gate_view(*a.queue());
    ASSERT_TRUE(v);
    EXPECT_EQ(v->lease_scope, dest);
    EXPECT_EQ(v->limit, 2);
    EXPECT_EQ(v->leases, 2);
    EXPECT_EQ(v->scope_leases, 2);
    EXPECT_TRUE(v->shared);
    EXPECT_FALSE(v->mark_pending);
    EXPECT_EQ(v->rate_scope, dest);
    ASSERT_TRUE(v->rate);
    EXPECT_EQ(v->rate->count, 600);
    EXPECT_EQ(v->allowance, a.queue()->limits.gate);
    // No limit covers another destination: nothing to show once its dead
    // mark has been read.
    a.mail(1, "other.example");
    EXPECT_TRUE(a.limits.gate_view(*a.queue("other.example"))->mark_pending);
    settle();
    EXPECT_FALSE(a.limits.gate_view(*a.queue("other.example")));
}

} // namespace
} // namespace cqmgr::qmgr
