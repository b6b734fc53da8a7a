// The dead backlog's decision: postpone only a known message, not asked
// for explicitly, whose destinations are all dead, and which its attempt
// would neither expire nor warn about; take everything else.
#include "dead_backlog_policy.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

constexpr int64_t now = 1'000'000;

// A message that arrived an hour ago, no warning due, all of its two
// destinations dead.
struct Fixture {
    DeferredIndex::Times times{now - 3600, 0, false};
    BacklogCase c{&times, false, 2, 2};
};

TEST(DeadBacklogPolicy, PostponesAKnownMessageWhoseDestinationsAreAllDead) {
    Fixture f;
    EXPECT_EQ(backlog_choice(f.c, now, testing::params()), BacklogChoice::postpone);
}

TEST(DeadBacklogPolicy, TakesWhatTheIndexDoesNotKnow) {
    Fixture f;
    f.c.times = nullptr;
    EXPECT_EQ(backlog_choice(f.c, now, testing::params()), BacklogChoice::take);
}

TEST(DeadBacklogPolicy, TakesExplicitRequests) {
    Fixture f;
    f.c.explicit_request = true;
    EXPECT_EQ(backlog_choice(f.c, now, testing::params()), BacklogChoice::take);
}

TEST(DeadBacklogPolicy, TakesAMessageWithADestinationThatIsNotDead) {
    Fixture f;
    f.c.dead = 1;
    EXPECT_EQ(backlog_choice(f.c, now, testing::params()), BacklogChoice::take);
    f.c.destinations = 0; // none known
    f.c.dead = 0;
    EXPECT_EQ(backlog_choice(f.c, now, testing::params()), BacklogChoice::take);
}

TEST(DeadBacklogPolicy, TakesAMessageItsAttemptWouldExpire) {
    Fixture f;
    auto p = testing::params("maximal_queue_lifetime = 1h");
    f.times.arrival = now - 3600; // expired now
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::take);
    f.times.arrival = now - 3600 + attempt_allowance; // at the attempt's end
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::take);
    f.times.arrival = now - 3600 + attempt_allowance + 1; // not yet
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::postpone);
}

TEST(DeadBacklogPolicy, ABounceExpiresWithBounceQueueLifetime) {
    Fixture f;
    auto p = testing::params("maximal_queue_lifetime = 5d\nbounce_queue_lifetime = 30m");
    f.times.arrival = now - 1800;
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::postpone);
    f.times.null_sender = true;
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::take);
}

TEST(DeadBacklogPolicy, TakesAMessageDueForADelayWarning) {
    Fixture f;
    auto p = testing::params();
    f.times.warn_time = now + attempt_allowance + 1; // due at the attempt's end
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::take);
    f.times.warn_time = now - 100; // overdue
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::take);
    f.times.warn_time = now + attempt_allowance + 2; // later
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::postpone);
    f.times.warn_time = 0; // none due, or sent
    EXPECT_EQ(backlog_choice(f.c, now, p), BacklogChoice::postpone);
}

} // namespace
} // namespace cqmgr::qmgr
