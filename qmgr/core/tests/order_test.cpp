// Where things go back on a list, in stock's order: an entry given back
// without an attempt, and a transport seen for the first time.
#include "scheduler_fixture.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

// An entry given back goes to the end of its queue's waiting list, but to
// the front of its peer's, so that its job sends it next and new
// recipients still fill the peer's last entry.
TEST_F(Fixture, UnselectedEntryEndsItsQueueAndStartsItsPeer) {
    Entry* e = first_entry_of_a(3, "d.example");
    ASSERT_TRUE(e);
    Transport& t = *e->queue->transport;
    Queue& q = *e->queue;
    Peer& p = *e->peer;
    s->entry_unselect(e);
    ASSERT_EQ(q.todo_count(), 3);
    EXPECT_EQ(&q.todo.back(), e);
    EXPECT_EQ(&p.entries.front(), e);
    EXPECT_EQ(s->select_entry(t), e);
    s->check_invariants();
}

// A new transport is tried first: it goes to the front of the round-robin
// list, and each selection moves the chosen transport to its end.
TEST_F(Fixture, NewTransportComesFirstInTheRoundRobin) {
    tc.dest_recipient_limit = 1;
    make();
    message("A", 3, "a.example", "alpha");
    message("B", 3, "b.example", "beta");
    Transport* first = s->select_transport();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->name, "beta");
    Transport* second = s->select_transport();
    ASSERT_TRUE(second);
    EXPECT_EQ(second->name, "alpha");
    Transport* third = s->select_transport();
    ASSERT_TRUE(third);
    EXPECT_EQ(third->name, "beta");
    // A third transport goes in front of both.
    message("C", 3, "c.example", "gamma");
    Transport* fourth = s->select_transport();
    ASSERT_TRUE(fourth);
    EXPECT_EQ(fourth->name, "gamma");
}
