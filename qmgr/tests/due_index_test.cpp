// The due index of the deferred scan (cqmgr_deferred_due_index).
#include "due_index.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

TEST(DueIndex, PassesOverOnlyWhatIsNotDueYet) {
    DueIndex x;
    int64_t t = 0;
    x.note("A1", 1000, 1);
    EXPECT_TRUE(x.not_due("A1", 900, 2, t));
    EXPECT_EQ(t, 1000);
    // The queue manager's margin: a file due within a second is due.
    EXPECT_TRUE(x.not_due("A1", 998, 2, t));
    EXPECT_FALSE(x.not_due("A1", 999, 2, t));
    EXPECT_FALSE(x.not_due("B2", 0, 2, t)); // unknown: look at it
    x.forget("A1");
    EXPECT_FALSE(x.not_due("A1", 900, 2, t));
    EXPECT_EQ(x.size(), 0u);
}

TEST(DueIndex, SweepsWhatAPassDidNotList) {
    DueIndex x;
    int64_t t = 0;
    x.note("A1", 1000, 1);
    x.note("B2", 1000, 1);
    x.note("C3", 1000, 2); // looked at again in pass 2
    EXPECT_TRUE(x.not_due("A1", 900, 2, t));
    x.sweep(2); // B2 was not listed: removed meanwhile
    EXPECT_EQ(x.size(), 2u);
    EXPECT_FALSE(x.not_due("B2", 900, 3, t));
    EXPECT_TRUE(x.not_due("C3", 900, 3, t));
}

} // namespace
} // namespace cqmgr::qmgr
