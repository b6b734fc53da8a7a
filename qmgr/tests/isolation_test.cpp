// The isolation between the delivery path and a real scheduler core (the
// core tests' fixture and scripted driver): a greeting timeout in the hop
// status lowers the queue's share in the scheduler; a death makes it a
// probe of 1, lifted by the first fast success; a transport without a
// share is left alone.  (The daemon calls these from the delivery path:
// scenario destination-share-tarpit.)
#include "isolation.hpp"
#include "scheduler_fixture.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using cqmgr::qmgr::testing::params;

namespace {

struct IsolationTest : core::test::Fixture {
    asio::io_context io;
    SystemClock clock;
    std::unique_ptr<CoreRequests> requests;
    std::unique_ptr<Isolation> isolation;

    // The scheduler (50 % of 100 agents per destination, or none with
    // `share` 0) and message "A" with 20 recipients for d.example; returns
    // A's first `k` entries, selected.
    std::vector<core::Entry*> start(int k, int share = 50) {
        tc.dest_recipient_limit = 1;
        tc.init_dest_concurrency = 8;
        tc.process_limit = 100;
        tc.dest_share = share;
        make();
        requests = std::make_unique<CoreRequests>(io, *s);
        isolation = std::make_unique<Isolation>(params("cqmgr_destination_agent_share = 50%\n"),
                                                *requests, clock);
        message("A", 20, "d.example");
        std::vector<core::Entry*> out;
        for (int i = 0; i < k; ++i)
            out.push_back(s->select_entry(s->transport("smtp")));
        return out;
    }
    core::Queue& queue() { return *s->find_queue("smtp", "d.example"); }
};

const core::DeliveryResult timed_out{
    core::DeliveryResult::Kind::replied,
    -1,
    {"4.4.2", "conversation with d.example[192.0.2.1] timed out while receiving the initial "
              "server greeting"}};

} // namespace

TEST_F(IsolationTest, ATimeoutLowersTheShareInTheScheduler) {
    auto busy = start(8);
    EXPECT_EQ(queue().limits.share, 50);
    queue().share_earned = 50; // past its slow start
    isolation->delivered(*busy[0], timed_out, 300'000, 2'000'000);
    // Half of the 8 the window lets go.
    EXPECT_EQ(queue().limits.share, 4);
    EXPECT_EQ(s->limits().shares().at({"smtp", "d.example"}).agents, 4);
    EXPECT_EQ(isolation->policy().lowered({"smtp", "d.example"}), 4);
    s->check_invariants();
}

TEST_F(IsolationTest, ANewDestinationsTimeoutLowersItsShareToOne) {
    // Still in its slow start: it may have had 1 delivery in flight (or
    // 2, with the one that ended) while others wanted agents.
    auto busy = start(8);
    EXPECT_EQ(queue().share_earned, 1);
    isolation->delivered(*busy[0], timed_out, 300'000, 2'000'000);
    EXPECT_EQ(queue().limits.share, 1);
    s->check_invariants();
}

TEST_F(IsolationTest, ADeathProbesWithOneDelivery) {
    auto busy = start(1);
    isolation->died(queue(), 2'000'000);
    EXPECT_EQ(queue().limits.share, 1);
    EXPECT_TRUE(isolation->policy().probing({"smtp", "d.example"}));
    // A fast success reopens it.
    isolation->delivered(*busy[0], core::DeliveryResult{}, 50, 2'000'100);
    EXPECT_EQ(queue().limits.share, 50);
    EXPECT_TRUE(s->limits().shares().empty());
    s->check_invariants();
}

TEST_F(IsolationTest, ATransportWithoutAShareIsLeftAlone) {
    auto busy = start(1, 0);
    isolation->delivered(*busy[0], timed_out, 300'000, 2'000'000);
    isolation->died(queue(), 2'000'000);
    EXPECT_EQ(queue().limits.share, 0);
    EXPECT_TRUE(s->limits().shares().empty());
}

namespace {

// A driver that hands the scheduler's window news to the isolation as the
// queue manager does (QueueManager::queue_window), from inside the
// scheduler's callback.
struct ForwardingDriver : core::test::FakeDriver {
    Isolation* isolation = nullptr;
    void queue_window(const core::Queue& q, bool positive) override {
        if (!positive && q.dead() && q.dsn) isolation->queue_window(q, positive, QueueTurn::died);
    }
};

} // namespace

TEST(IsolationInCallback, ADeathLowersTheShareOnceTheSchedulersCallHasReturned) {
    ForwardingDriver drv;
    core::TransportConfig tc;
    tc.dest_recipient_limit = 1;
    tc.init_dest_concurrency = 1;
    tc.fail_cohort_limit = 1;
    tc.process_limit = 100;
    tc.dest_share = 50;
    core::Scheduler s(
        core::SchedulerConfig{}, [&](const std::string&) { return tc; }, drv);
    drv.sched = &s;
    s.set_time(1000);
    asio::io_context io;
    SystemClock clock;
    CoreRequests requests(io, s);
    Isolation isolation(params("cqmgr_destination_agent_share = 50%\n"), requests, clock);
    drv.isolation = &isolation;
    core::Message m;
    m.id = "A";
    s.message_add(m);
    core::Transport& t = s.transport("smtp");
    for (int i = 0; i < 3; ++i) {
        std::string a = "r" + std::to_string(i) + "@d.example";
        s.assign(m, s.queue_for(t, "d.example", "d.example"), core::test::rcpt(a));
    }
    s.batch_done(m, false, 0);
    core::Entry* e = s.select_entry(t);
    ASSERT_NE(e, nullptr);
    // The whole cohort fails: the scheduler declares d.example dead and
    // tells the driver from inside delivery_done().  The isolation's
    // change may not re-enter the scheduler there (the core panics): it
    // waits for the loop.
    s.delivery_done(e, {core::DeliveryResult::Kind::replied, 1, {"4.4.1", "connect refused"}});
    core::Queue* q = s.find_queue("smtp", "d.example");
    ASSERT_NE(q, nullptr);
    EXPECT_TRUE(q->dead());
    EXPECT_TRUE(isolation.policy().probing({"smtp", "d.example"}));
    EXPECT_EQ(q->limits.share, 50);
    io.poll();
    EXPECT_EQ(q->limits.share, 1);
    EXPECT_EQ(s.limits().shares().at({"smtp", "d.example"}).agents, 1);
    EXPECT_TRUE(q->limits.share_always); // a probe binds even alone
    s.check_invariants();
}
