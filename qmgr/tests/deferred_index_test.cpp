// The index of deferred messages' destinations (recovery ramp).
#include "deferred_index.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

std::vector<std::string> names(const DeferredIndex::Destinations* d) {
    std::vector<std::string> v;
    if (d)
        for (const std::string* s : *d)
            v.push_back(*s);
    return v;
}

TEST(DeferredIndex, FindsWhatWasAddedAndForgetsWhatLeft) {
    DeferredIndex x;
    x.add("A1", {"smtp:[a.example]", "smtp:b.example"}, 100);
    x.add("B2", {"smtp:b.example"}, 100);
    EXPECT_EQ(names(x.find("A1", 101)),
              (std::vector<std::string>{"smtp:[a.example]", "smtp:b.example"}));
    EXPECT_EQ(names(x.find("B2", 101)), std::vector<std::string>{"smtp:b.example"});
    EXPECT_EQ(x.find("C3", 101), nullptr);
    EXPECT_EQ(x.names(), 2u); // b.example kept once
    x.erase("A1");
    EXPECT_EQ(x.find("A1", 102), nullptr);
    EXPECT_EQ(x.names(), 1u);
    x.erase("B2");
    x.erase("B2"); // twice is fine
    EXPECT_EQ(x.size(), 0u);
    EXPECT_EQ(x.names(), 0u);
}

// What cqmgrctl explain counts: the messages that go (in part) to one
// destination.
TEST(DeferredIndex, CountsTheMessagesOfADestination) {
    DeferredIndex x;
    x.add("A1", {"smtp:a", "smtp:b"}, 100);
    x.add("B2", {"smtp:b", "smtp:b"}, 100);
    EXPECT_EQ(x.messages_for("smtp:a"), 1);
    EXPECT_EQ(x.messages_for("smtp:b"), 2);
    EXPECT_EQ(x.messages_for("relay:b"), 0);
    x.erase("B2");
    EXPECT_EQ(x.messages_for("smtp:b"), 1);
}

TEST(DeferredIndex, AddingAgainReplacesAndRepeatsCountOnce) {
    DeferredIndex x;
    x.add("A1", {"smtp:a", "smtp:a", "smtp:b"}, 100);
    EXPECT_EQ(names(x.find("A1", 100)), (std::vector<std::string>{"smtp:a", "smtp:b"}));
    x.add("A1", {"smtp:b", "relay:c"}, 200);
    EXPECT_EQ(names(x.find("A1", 200)), (std::vector<std::string>{"smtp:b", "relay:c"}));
    EXPECT_EQ(x.names(), 2u); // smtp:a is gone
    x.erase("A1");
    EXPECT_EQ(x.names(), 0u);
}

TEST(DeferredIndex, SweepDropsWhatWasNotLookedUpSince) {
    DeferredIndex x;
    x.add("OLD", {"smtp:a"}, 100);
    x.add("SEEN", {"smtp:a"}, 100);
    x.add("NEW", {"smtp:b"}, 500);
    x.find("SEEN", 400);
    x.sweep(300);
    EXPECT_EQ(x.find("OLD", 600), nullptr);
    EXPECT_NE(x.find("SEEN", 600), nullptr);
    EXPECT_NE(x.find("NEW", 600), nullptr);
    EXPECT_EQ(x.size(), 2u);
    EXPECT_EQ(x.names(), 2u);
}

TEST(DeferredIndex, NoDestinationsIsStillAnEntry) {
    DeferredIndex x;
    x.add("A1", {}, 100);
    ASSERT_NE(x.find("A1", 100), nullptr);
    EXPECT_TRUE(x.find("A1", 100)->empty());
}

} // namespace
} // namespace cqmgr::qmgr
