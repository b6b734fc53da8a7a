// Sender limits counted per provider (sender.cpp): a group's concurrency
// and rate hold across every queue of a provider on the transport, a
// queue outside every provider keeps a scope of its own, select_transport()
// counts a load's room once for all its queues, and a queue that joins a
// provider later takes its deliveries in flight into the provider's count.
#include "core_access.hpp"
#include "scheduler_fixture.hpp"

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

struct ProviderSenders : Fixture {
    // A message of sender group `group` with one recipient for `queue`.
    Message& sent(const std::string& id, SenderGroup group, const std::string& queue) {
        return message(id, 1, queue, "smtp", Lane::normal, group);
    }
    static SenderLimit per_provider(int concurrency, int64_t rate_count = 0, int64_t period_s = 0) {
        SenderLimit l;
        l.concurrency = concurrency;
        l.rate_count = rate_count;
        l.rate_period_ms = period_s * 1000;
        l.rate_burst = rate_count > 0 ? 1 : 0;
        l.per = SenderPer::provider;
        return l;
    }
    // How many of `v` are for `queue`.
    static int on(const std::vector<Entry*>& v, const std::string& queue) {
        int n = 0;
        for (Entry* e : v)
            n += e->queue->name == queue;
        return n;
    }
};

TEST_F(ProviderSenders, TheConcurrencyHoldsAcrossTheProvidersQueues) {
    drv.providers = {{"a.example", 7}, {"b.example", 7}};
    make_wide(10);
    s->set_sender_limit(1, per_provider(2));
    for (int i = 0; i < 5; ++i) {
        sent("a" + std::to_string(i), 1, "a.example");
        sent("b" + std::to_string(i), 1, "b.example");
        // Outside every provider: a scope of its own.
        sent("e" + std::to_string(i), 1, "e.example");
    }
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(on(busy, "a.example") + on(busy, "b.example"), 2);
    EXPECT_EQ(on(busy, "e.example"), 2);
    EXPECT_EQ(busy.size(), 4u);
    EXPECT_EQ(s->select_transport(), nullptr);
    // One of the provider's deliveries ends: one more of its mail goes,
    // on either queue.
    for (Entry* e : busy)
        if (e->queue->name == "a.example") {
            deliver(e);
            break;
        }
    std::vector<Entry*> next = fill();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_NE(next[0]->queue->name, "e.example");
}

TEST_F(ProviderSenders, AnAgentIsAskedForOnlyOnceForTheRoomOfOneLoad) {
    drv.providers = {{"a.example", 1}, {"b.example", 1}};
    make_wide(10);
    s->set_sender_limit(1, per_provider(1));
    sent("a", 1, "a.example");
    sent("b", 1, "b.example");
    // One place for the two queues: one connection, not one per queue.
    Transport* t = s->select_transport();
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(s->select_transport(), nullptr);
    s->connection_ready(*t);
    Entry* e = s->select_entry(*t);
    ASSERT_NE(e, nullptr);
    s->check_invariants();
    EXPECT_EQ(s->select_transport(), nullptr);
    deliver(e);
    EXPECT_EQ(fill().size(), 1u);
}

TEST_F(ProviderSenders, TheRateHoldsAcrossTheProvidersQueues) {
    drv.providers = {{"a.example", 3}, {"b.example", 3}};
    make_wide(10);
    // One start every 10 seconds for the whole provider.
    s->set_sender_limit(1, per_provider(0, 1, 10));
    for (int i = 0; i < 3; ++i) {
        sent("a" + std::to_string(i), 1, "a.example");
        sent("b" + std::to_string(i), 1, "b.example");
    }
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 1u);
    deliver(busy[0]);
    s->set_time(1009);
    EXPECT_TRUE(fill().empty());
    s->set_time(1010);
    EXPECT_EQ(fill().size(), 1u);
    s->check_invariants();
}

TEST_F(ProviderSenders, AQueueThatJoinsLaterBringsItsDeliveries) {
    make_wide(10);
    s->set_sender_limit(1, per_provider(1));
    for (int i = 0; i < 3; ++i) {
        sent("a" + std::to_string(i), 1, "a.example");
        sent("b" + std::to_string(i), 1, "b.example");
    }
    // Born outside every provider (their MX answers have not come yet):
    // one place each.
    std::vector<Entry*> busy = fill();
    ASSERT_EQ(busy.size(), 2u);
    Transport& t = s->transport("smtp");
    // Both join provider 5: two in flight, where it allows one.
    s->set_queue_provider(*s->find_queue("smtp", "a.example"), 5);
    s->check_invariants();
    s->set_queue_provider(*s->find_queue("smtp", "b.example"), 5);
    s->check_invariants();
    EXPECT_EQ(t.senders.by_key.size(), 1u);
    EXPECT_EQ(s->select_transport(), nullptr);
    deliver(busy[0]);
    EXPECT_TRUE(fill().empty());
    deliver(busy[1]);
    busy = fill();
    EXPECT_EQ(busy.size(), 1u);
    // It leaves the provider again: its own place comes back.
    Queue& b = *s->find_queue("smtp", "b.example");
    Queue& other = busy[0]->queue == &b ? *s->find_queue("smtp", "a.example") : b;
    s->set_queue_provider(other, 0);
    s->check_invariants();
    EXPECT_EQ(fill().size(), 1u);
}

TEST_F(ProviderSenders, PerDestinationLimitsIgnoreProviders) {
    drv.providers = {{"a.example", 1}, {"b.example", 1}};
    make_wide(10);
    SenderLimit l;
    l.concurrency = 1;
    s->set_sender_limit(1, l);
    sent("a", 1, "a.example");
    sent("b", 1, "b.example");
    EXPECT_EQ(fill().size(), 2u);
    // No group counts per provider: queues are not even asked theirs.
    EXPECT_EQ(s->find_queue("smtp", "a.example")->provider, 0u);
}

TEST_F(ProviderSenders, QueuesBornBeforeTheFirstLimitLearnTheirProvider) {
    drv.providers = {{"a.example", 2}, {"b.example", 2}};
    make_wide(10);
    // The groups are numbered as their first message comes: queues with
    // other mail are there before the first limit per provider.
    message("x", 1, "a.example");
    message("y", 1, "b.example");
    EXPECT_EQ(s->find_queue("smtp", "a.example")->provider, 0u);
    s->set_sender_limit(1, per_provider(1));
    EXPECT_EQ(s->find_queue("smtp", "a.example")->provider, 2u);
    sent("a", 1, "a.example");
    sent("b", 1, "b.example");
    std::vector<Entry*> busy = fill();
    EXPECT_EQ(busy.size(), 3u); // x, y, and one of the group
}

} // namespace
