// The active queue's table of messages by queue ID: look-ups, growth past
// its first bucket array, removal, and destruction of what it still holds.
#include "message_table.hpp"

#include <gtest/gtest.h>
#include <memory>
#include <string>

namespace cqmgr::qmgr {
namespace {

// A message with queue ID `id`.
std::unique_ptr<Message> message(const std::string& id) {
    auto m = std::make_unique<Message>();
    m->id = id;
    return m;
}

TEST(MessageTable, FindsWhatWasAddedAndNothingElse) {
    MessageTable t;
    EXPECT_EQ(t.size(), 0u);
    EXPECT_FALSE(t.contains("4F2C81A0B3"));
    Message& m = t.add(message("4F2C81A0B3"));
    EXPECT_EQ(t.size(), 1u);
    EXPECT_TRUE(t.contains("4F2C81A0B3"));
    EXPECT_EQ(t.find("4F2C81A0B3"), &m);
    EXPECT_EQ(t.find("4F2C81A0B4"), nullptr);
    EXPECT_EQ(t.find(""), nullptr);
}

TEST(MessageTable, GrowsAndKeepsEveryMessageFindable) {
    MessageTable t;
    std::vector<Message*> added;
    for (int i = 0; i < 5000; ++i)
        added.push_back(&t.add(message("ID" + std::to_string(i))));
    EXPECT_EQ(t.size(), 5000u);
    for (int i = 0; i < 5000; ++i)
        ASSERT_EQ(t.find("ID" + std::to_string(i)), added[static_cast<size_t>(i)]) << i;
    // Every other one leaves; the rest stay findable.
    for (int i = 0; i < 5000; i += 2)
        t.remove(*added[static_cast<size_t>(i)]);
    EXPECT_EQ(t.size(), 2500u);
    for (int i = 0; i < 5000; ++i)
        EXPECT_EQ(t.contains("ID" + std::to_string(i)), i % 2 == 1) << i;
    // Taken in again after it left.
    Message& back = t.add(message("ID0"));
    EXPECT_EQ(t.find("ID0"), &back);
}

TEST(MessageTable, DestroysWhatItStillHolds) {
    // Under the sanitizers a leak here fails the run.
    MessageTable t;
    for (int i = 0; i < 100; ++i)
        t.add(message("M" + std::to_string(i)));
}

TEST(MessageTableDeath, AddingAnIdTwicePanics) {
    MessageTable t;
    t.add(message("A1"));
    EXPECT_DEATH(t.add(message("A1")), "in the active queue already");
}

} // namespace
} // namespace cqmgr::qmgr
