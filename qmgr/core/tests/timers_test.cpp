// The scheduler's timers alone: due ones come out in time order, and a
// timer is found by what it names.
#include "timers.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;

TEST(Timers, DueOnesComeOutInTimeOrder) {
    Timers timers;
    EXPECT_FALSE(timers.next());
    EXPECT_FALSE(timers.take_due(1000));
    timers.add(1300, Timer{Timer::Kind::queue_revive, "smtp", "b.example"});
    timers.add(1100, Timer{Timer::Kind::queue_resume, "smtp", "a.example"});
    timers.add(1300, Timer{Timer::Kind::transport_revive, "relay", ""});
    EXPECT_EQ(timers.next(), 1100);
    EXPECT_FALSE(timers.take_due(1099));
    auto first = timers.take_due(1200);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->first, 1100);
    EXPECT_EQ(first->second.queue, "a.example");
    EXPECT_FALSE(timers.take_due(1200));
    // Two at the same time: in the order they were set.
    auto second = timers.take_due(1300);
    auto third = timers.take_due(1300);
    ASSERT_TRUE(second && third);
    EXPECT_EQ(second->second.kind, Timer::Kind::queue_revive);
    EXPECT_EQ(third->second.kind, Timer::Kind::transport_revive);
    EXPECT_FALSE(timers.next());
}

TEST(Timers, AreFoundByWhatTheyName) {
    Timers timers;
    timers.add(1600, Timer{Timer::Kind::hold_expire, "smtp", "d.example"});
    EXPECT_TRUE(timers.has(1600, Timer::Kind::hold_expire, "smtp", "d.example"));
    EXPECT_FALSE(timers.has(1600, Timer::Kind::cap_expire, "smtp", "d.example"));
    EXPECT_FALSE(timers.has(1600, Timer::Kind::hold_expire, "", "d.example"));
    EXPECT_FALSE(timers.has(1601, Timer::Kind::hold_expire, "smtp", "d.example"));
}
