// The due index of the deferred scan (cqmgr_deferred_due_index): files by
// not-before time, taken from the front when due.
#include "due_index.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <vector>

namespace cqmgr::qmgr {
namespace {

// The IDs take_due() gives at `now`, in order.
std::vector<std::string> take_all(DueIndex& x, int64_t now) {
    std::vector<std::string> out;
    while (auto d = x.take_due(now))
        out.push_back(d->id);
    return out;
}

TEST(DueIndex, TakesWhatIsDueEarliestFirst) {
    DueIndex x;
    x.note("C3", 1300);
    x.note("A1", 1100);
    x.note("B2", 1200);
    x.note("Z9", 5000);
    // Noted during a pass: parked, known, but not taken until it ends.
    EXPECT_EQ(x.known("A1"), 1100);
    EXPECT_FALSE(x.take_due(2000));
    x.pass_ended(false);
    EXPECT_FALSE(x.take_due(1098));
    // The queue manager's margin: a file due within a second is due.
    auto d = x.take_due(1099);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->id, "A1");
    EXPECT_EQ(d->time, 1100);
    // Taken out: no longer known until noted again.
    EXPECT_FALSE(x.known("A1"));
    EXPECT_EQ(take_all(x, 1300), (std::vector<std::string>{"B2", "C3"}));
    EXPECT_EQ(x.size(), 1u);
    EXPECT_EQ(x.known("Z9"), 5000);
    EXPECT_FALSE(x.known("Q0"));
}

TEST(DueIndex, AFileLeftDueComesBackOnlyAtTheNextPass) {
    DueIndex x;
    x.note("A1", 1000);
    x.unpark(); // a pass begins
    auto d = x.take_due(1000);
    ASSERT_TRUE(d);
    x.note(d->id, d->time); // held back (recovery ramp): still due
    EXPECT_FALSE(x.take_due(1000));
    EXPECT_TRUE(x.known("A1"));
    x.pass_ended(false);
    EXPECT_EQ(take_all(x, 1000), (std::vector<std::string>{"A1"}));
}

TEST(DueIndex, ReplacesAndForgetsWhereverTheEntryIs) {
    DueIndex x;
    x.note("A1", 1000);
    x.note("B2", 1500);
    x.note("D4", 1100);
    x.unpark();
    x.note("A1", 2000); // looked at again: its mtime moved
    x.note("C3", 900);  // parked
    x.forget("C3");
    x.forget("D4");
    x.forget("nothing");
    x.unpark();
    EXPECT_EQ(x.size(), 2u);
    EXPECT_EQ(take_all(x, 1998), (std::vector<std::string>{"B2"}));
    EXPECT_EQ(take_all(x, 1999), (std::vector<std::string>{"A1"}));
}

TEST(DueIndex, ACompletePassDropsWhatItDidNotNote) {
    DueIndex x;
    x.note("A1", 1000);
    x.note("B2", 1000);
    x.note("C3", 1000);
    x.pass_ended(true);
    EXPECT_EQ(x.size(), 3u);
    // The next complete pass: B2 left deferred/ meanwhile, C3 was noted
    // again, A1 was taken and deferred again (noted with a new time).
    x.unpark();
    x.note("C3", 1000);
    x.note("A1", 1200);
    x.pass_ended(true);
    EXPECT_EQ(x.size(), 2u);
    EXPECT_FALSE(x.known("B2"));
    // A partial pass drops nothing.
    x.note("D4", 1000);
    x.pass_ended(false);
    x.pass_ended(false);
    EXPECT_EQ(x.size(), 3u);
    auto due = take_all(x, 1000);
    std::sort(due.begin(), due.end());
    EXPECT_EQ(due, (std::vector<std::string>{"C3", "D4"}));
    EXPECT_EQ(take_all(x, 1200), (std::vector<std::string>{"A1"}));
}

TEST(DueIndex, NothingDueInTheFarFutureAndZeroIsDueAtOnce) {
    DueIndex x;
    x.note("FAR", int64_t{1} << 40); // clamped, still not due
    x.note("NOW", 0);
    x.pass_ended(false);
    EXPECT_EQ(take_all(x, 1'700'000'000), (std::vector<std::string>{"NOW"}));
    EXPECT_EQ(x.size(), 1u);
}

TEST(DueIndex, OrderHoldsThroughRandomChanges) {
    // Against a plain model: random notes, forgets and takes.
    DueIndex x;
    std::map<std::string, int64_t> model;
    std::mt19937 rng(17);
    for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < 500; ++k) {
            std::string id = "Q" + std::to_string(rng() % 700);
            if (rng() % 4 == 0) {
                x.forget(id);
                model.erase(id);
            } else {
                int64_t t = 1000 + rng() % 1000;
                x.note(id, t);
                model[id] = t;
            }
        }
        x.pass_ended(false);
        int64_t now = 1000 + round * 50;
        int64_t last = 0;
        while (auto d = x.take_due(now)) {
            ASSERT_EQ(model.count(d->id), 1u);
            EXPECT_EQ(model[d->id], d->time);
            EXPECT_LE(d->time, now + 1);
            EXPECT_GE(d->time, last);
            last = d->time;
            model.erase(d->id);
        }
        for (auto& [id, t] : model) {
            EXPECT_GT(t, now + 1) << id;
            EXPECT_EQ(x.known(id), t);
        }
        EXPECT_EQ(x.size(), model.size());
    }
}

} // namespace
} // namespace cqmgr::qmgr
