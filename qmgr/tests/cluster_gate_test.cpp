// The arithmetic of cluster gates: shared leases, the local count while
// Redis is away, rates, and the lease bookkeeping.
#include "cluster_gate.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

TEST(ClusterGate, NoLimitNoGate) {
    EXPECT_FALSE(gate_allowance(GateCounts{}).has_value());
}

TEST(ClusterGate, PendingDeadMarkClosesTheGate) {
    EXPECT_EQ(gate_allowance({.mark_pending = true}), 0);
    EXPECT_EQ(gate_allowance({.mark_pending = true, .limit = 5, .shared = true, .leases = 3}), 0);
}

TEST(ClusterGate, SharedAllowsOneDeliveryPerLeaseNotClosing) {
    GateCounts c{.limit = 5, .shared = true, .leases = 3, .busy = 2};
    EXPECT_EQ(gate_allowance(c), 3);
    c.closing = 1;
    EXPECT_EQ(gate_allowance(c), 2);
    c.closing = 4; // more closing than leases: never negative
    EXPECT_EQ(gate_allowance(c), 0);
}

TEST(ClusterGate, LocalCountLeavesRoomForTheScopesOtherQueues) {
    // Only this queue's delivery in the scope.
    EXPECT_EQ(gate_allowance({.limit = 5, .busy = 1, .scope_busy = 1}), 5);
    // Three more in other queues of the scope.
    EXPECT_EQ(gate_allowance({.limit = 5, .busy = 1, .scope_busy = 4}), 2);
    // Its closing slot is not free yet: 5 - 3 others - 1 closing.
    EXPECT_EQ(gate_allowance({.limit = 5, .busy = 1, .closing = 1, .scope_busy = 5}), 1);
    // Others over the limit (the limit was lowered).
    EXPECT_EQ(gate_allowance({.limit = 5, .busy = 1, .closing = 1, .scope_busy = 9}), 0);
}

TEST(ClusterGate, RateAllowsWhatIsInFlightPlusTokens) {
    EXPECT_EQ(gate_allowance({.busy = 2, .rate = true}), 2);
    EXPECT_EQ(gate_allowance({.busy = 2, .rate = true, .tokens = 1}), 3);
}

TEST(ClusterGate, RateAndConcurrencyTakeTheLower) {
    EXPECT_EQ(gate_allowance(
                  {.limit = 5, .shared = true, .leases = 4, .busy = 1, .rate = true, .tokens = 1}),
              2);
    EXPECT_EQ(gate_allowance({.limit = 5, .shared = true, .leases = 1, .rate = true}), 0);
}

TEST(ClusterGate, LeaseWantedWhenEveryLeaseIsInUseAndTheWindowHasRoom) {
    // A spare lease is held.
    EXPECT_FALSE(lease_wanted({.limit = 5, .shared = true, .leases = 2, .busy = 1}, 4));
    GateCounts full{.limit = 5, .shared = true, .leases = 2, .busy = 2};
    EXPECT_TRUE(lease_wanted(full, 4));
    EXPECT_FALSE(lease_wanted(full, 2)); // the window is full
    full.closing = 1;                    // a closing delivery still holds its lease
    EXPECT_TRUE(lease_wanted(full, 2));
    // Redis away: the local count applies.  Only a rate: no leases at all.
    EXPECT_FALSE(lease_wanted({.limit = 5, .leases = 2, .busy = 2}, 4));
    EXPECT_FALSE(lease_wanted({.shared = true, .leases = 2, .busy = 2, .rate = true}, 4));
}

TEST(ClusterGate, NoLeaseWantedBeyondTheLimitOnOneHost) {
    // The window has room, but this host holds the scope's whole limit (in
    // this queue, or with the scope's other queues).
    EXPECT_FALSE(
        lease_wanted({.limit = 2, .shared = true, .leases = 2, .scope_leases = 2, .busy = 2}, 5));
    EXPECT_FALSE(
        lease_wanted({.limit = 2, .shared = true, .leases = 1, .scope_leases = 2, .busy = 1}, 5));
    EXPECT_TRUE(
        lease_wanted({.limit = 3, .shared = true, .leases = 1, .scope_leases = 2, .busy = 1}, 5));
}

TEST(ClusterGate, LeasesKeptForDeliveriesAndTheNextOne) {
    EXPECT_EQ(leases_to_keep({.busy = 2, .closing = 1}, false), 3);
    EXPECT_EQ(leases_to_keep({.busy = 2, .closing = 1}, true), 4);
    EXPECT_EQ(leases_to_keep(GateCounts{}, false), 0);
}

TEST(ClusterGate, ALearnedLimitNarrowsTheTables) {
    // Nothing learned: the table's limits.
    ScopeLimits table{.concurrency = 10, .rate = cluster::RateSpec{60, 60'000, 60}};
    EXPECT_EQ(narrowed_by_learned(table, {}), table);
    // A learned cap under the table's lowers it; above it, changes nothing.
    EXPECT_EQ(narrowed_by_learned(table, {4, 0}).concurrency, 4);
    EXPECT_EQ(narrowed_by_learned(table, {12, 0}).concurrency, 10);
    EXPECT_EQ(narrowed_by_learned(table, {4, 0}).rate, table.rate);
    // Without a table, the learned cap alone.
    EXPECT_EQ(narrowed_by_learned({}, {3, 0}), (ScopeLimits{3, std::nullopt}));
    // A pause: one at a time, a start per pause at most (a slower pace
    // than the table's), or the table's where it is slower.
    EXPECT_EQ(narrowed_by_learned(table, {0, 5}), (ScopeLimits{1, cluster::RateSpec{1, 5000, 1}}));
    ScopeLimits slow{.rate = cluster::RateSpec{1, 10'000, 1}};
    EXPECT_EQ(narrowed_by_learned(slow, {0, 5}), (ScopeLimits{1, slow.rate}));
}

} // namespace
} // namespace cqmgr::qmgr
