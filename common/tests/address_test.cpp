// The address splitter over the cases each of its callers depends on.
#include "cqmgr/common/address.hpp"

#include <gtest/gtest.h>

using cqmgr::split_address;

namespace {
// "local|domain|@" or "local|domain|-": the parts in one string.
std::string parts(std::string_view a) {
    auto p = split_address(a);
    return std::string(p.local) + "|" + std::string(p.domain) + (p.has_at ? "|@" : "|-");
}
} // namespace

TEST(SplitAddress, AtTheLastAt) {
    EXPECT_EQ(parts("user@example.com"), "user|example.com|@");
    EXPECT_EQ(parts("a@b@c"), "a@b|c|@");
}

TEST(SplitAddress, NoAtIsALocalPartAlone) {
    EXPECT_EQ(parts("postmaster"), "postmaster||-");
    EXPECT_EQ(parts(""), "||-");
}

TEST(SplitAddress, EmptySides) {
    EXPECT_EQ(parts("user@"), "user||@");
    EXPECT_EQ(parts("@example.com"), "|example.com|@");
    EXPECT_EQ(parts("@"), "||@");
}

TEST(SplitAddress, QuotedLocalPartKeepsItsAt) {
    EXPECT_EQ(parts("\"a@b\"@example.com"), "\"a@b\"|example.com|@");
    EXPECT_EQ(parts("\"a b\"@"), "\"a b\"||@");
}

TEST(SplitAddress, SourceRouteSplitsAtTheLastAtToo) {
    EXPECT_EQ(parts("@r1,@r2:u@d"), "@r1,@r2:u|d|@");
}

TEST(SplitAddress, PartsAreViewsIntoTheAddress) {
    std::string_view a = "u@d";
    auto p = split_address(a);
    EXPECT_EQ(p.local.data(), a.data());
    EXPECT_EQ(p.domain.data(), a.data() + 2);
}
