// The recovery ramp's decisions on a clock of the test's own: per
// destination for the messages cqmgr deferred, one shared bucket for the
// others, and what an administrator's explicit requests bypass.
#include "cqmgr/queuefile/queue_layout.hpp"
#include "recovery_ramp.hpp"
#include "scan.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

struct FakeClock final : WallClock {
    int64_t sec = 1000;
    int64_t usec = 0;
    int64_t now() const override { return sec; }
    protocol::TimeVal precise() const override { return {sec, usec}; }
};

struct Ramp {
    asio::io_context io;
    conf::QmgrParams params;
    FakeClock clock;
    int rescans = 0;
    RecoveryRamp ramp;

    explicit Ramp(const std::string& cf)
        : params(testing::params(cf)), ramp(io, params, clock, [this] { ++rescans; }) {}

    void defer(const std::string& id, const std::vector<std::string>& destinations) {
        Message m;
        m.id = id;
        for (const auto& d : destinations)
            m.add_destination(d);
        ramp.deferred(m);
    }
    // How many of `ids` the ramp lets through now and the feed takes.
    int promoted(const std::vector<std::string>& ids) {
        int n = 0;
        for (const auto& id : ids)
            if (ramp.admit(id, 0, queuefile::qmode::ready)) {
                ramp.promoted(id);
                ++n;
            }
        return n;
    }
    // How many of `ids` the ramp lets through now (a due scan without A).
    int admitted(const std::vector<std::string>& ids) {
        int n = 0;
        for (const auto& id : ids)
            if (ramp.admit(id, 0, queuefile::qmode::ready)) ++n;
        return n;
    }
};

std::vector<std::string> ids(const std::string& prefix, int n) {
    std::vector<std::string> v;
    for (int i = 0; i < n; ++i)
        v.push_back(prefix + std::to_string(i));
    return v;
}

TEST(RecoveryRamp, OffByDefault) {
    Ramp r("");
    EXPECT_FALSE(r.ramp.on());
    r.defer("A1", {"smtp:a"});
    EXPECT_EQ(r.ramp.index().size(), 0u); // nothing kept
    EXPECT_EQ(r.admitted(ids("X", 1000)), 1000);
}

TEST(RecoveryRamp, UnknownMessagesShareOneBucket) {
    Ramp r("cqmgr_recovery_rate = 10");
    ASSERT_TRUE(r.ramp.on());
    EXPECT_EQ(r.admitted(ids("X", 50)), 10); // the first second's worth
    r.clock.usec = 500000;
    EXPECT_EQ(r.admitted(ids("X", 50)), 5);
    r.clock.sec += 1;
    EXPECT_EQ(r.admitted(ids("X", 50)), 10);
}

TEST(RecoveryRamp, EachDestinationHasItsOwnRate) {
    Ramp r("cqmgr_recovery_rate = 3");
    for (const auto& id : ids("A", 10))
        r.defer(id, {"smtp:a.example"});
    for (const auto& id : ids("B", 10))
        r.defer(id, {"smtp:b.example"});
    EXPECT_EQ(r.admitted(ids("A", 10)), 3);
    EXPECT_EQ(r.admitted(ids("B", 10)), 3);
    EXPECT_EQ(r.admitted(ids("U", 10)), 3); // not in the index
    EXPECT_EQ(r.admitted(ids("A", 10)), 0);
}

TEST(RecoveryRamp, AMessageGoesWhileOneOfItsDestinationsHasATokenAndTakesFromEach) {
    Ramp r("cqmgr_recovery_rate = 2");
    r.defer("AB", {"smtp:a", "smtp:b"});
    r.defer("A1", {"smtp:a"});
    r.defer("A2", {"smtp:a"});
    r.defer("B1", {"smtp:b"});
    EXPECT_EQ(r.admitted({"A1", "A2"}), 2); // a is empty now
    EXPECT_EQ(r.admitted({"AB"}), 1);       // b has tokens: it goes, taking one of b's
    EXPECT_EQ(r.admitted({"B1"}), 1);       // b's last
    EXPECT_EQ(r.admitted({"AB"}), 0);       // neither has any
}

TEST(RecoveryRamp, APassOfTheRampAloneHoldsIndexedFilesWithoutLookingAtThem) {
    Ramp r("cqmgr_recovery_rate = 2");
    r.defer("A1", {"smtp:a"});
    r.defer("A2", {"smtp:a"});
    r.defer("A3", {"smtp:a"});
    // Any other request's pass looks at every file.
    r.ramp.pass_requested(false);
    EXPECT_FALSE(r.ramp.hold_unseen("A1"));
    r.ramp.pass_requested(true);
    EXPECT_FALSE(r.ramp.hold_unseen("A1")); // a has tokens: look at it
    EXPECT_FALSE(r.ramp.hold_unseen("U1")); // not in the index: the shared bucket
    EXPECT_EQ(r.admitted({"A1", "A2"}), 2); // the look-ups took no token
    EXPECT_TRUE(r.ramp.hold_unseen("A3"));  // a is empty now
    EXPECT_FALSE(r.ramp.hold_unseen("U1"));
    EXPECT_EQ(r.admitted({"U1", "U2"}), 2);
    EXPECT_TRUE(r.ramp.hold_unseen("U3")); // the shared bucket is empty now
    r.ramp.pass_done();                    // A3 was held back: another pass comes
    r.io.run_for(std::chrono::seconds(2));
    EXPECT_EQ(r.rescans, 1);
    r.clock.sec += 1; // a has refilled
    EXPECT_FALSE(r.ramp.hold_unseen("A3"));
    EXPECT_EQ(r.admitted({"A3"}), 1);
}

TEST(RecoveryRamp, ExplicitRequestsAreNotRamped) {
    Ramp r("cqmgr_recovery_rate = 1");
    EXPECT_TRUE(r.ramp.admit("X1", 0, queuefile::qmode::ready));
    EXPECT_FALSE(r.ramp.admit("X2", 0, queuefile::qmode::ready));
    // postqueue -f (A), postqueue -i (g+r), postsuper -e (g+x).
    EXPECT_TRUE(r.ramp.admit("X2", scan_flag::all | scan_flag::start, queuefile::qmode::ready));
    EXPECT_TRUE(r.ramp.admit("X3", 0, queuefile::qmode::ready | queuefile::qmode::unthrottle));
    EXPECT_TRUE(r.ramp.admit("X4", 0, queuefile::qmode::ready | queuefile::qmode::expire));
    // F alone (flush(8) before a site flush) is no request for all of it.
    EXPECT_FALSE(r.ramp.admit("X5", scan_flag::flush, queuefile::qmode::ready));
}

TEST(RecoveryRamp, NoMoreThanTwoSecondsWorthOfABucketInTheActiveQueue) {
    Ramp r("cqmgr_recovery_rate = 2");
    r.defer("A1", {"smtp:a"});
    EXPECT_EQ(r.promoted(ids("X", 10)), 2);
    r.clock.sec += 1;
    EXPECT_EQ(r.promoted(ids("Y", 10)), 2);
    EXPECT_EQ(r.ramp.outstanding(""), 4);
    r.clock.sec += 1; // tokens again, but 4 are still in the active queue
    EXPECT_EQ(r.promoted(ids("Z", 10)), 0);
    EXPECT_EQ(r.promoted({"A1"}), 1); // another bucket
    r.ramp.left_active("X0");
    r.ramp.left_active("nobody"); // not ramped: no change
    EXPECT_EQ(r.ramp.outstanding(""), 3);
    EXPECT_EQ(r.promoted(ids("Z", 10)), 1);
    // What A takes does not count against the bucket.
    EXPECT_TRUE(r.ramp.admit("F1", scan_flag::all, queuefile::qmode::ready));
    r.ramp.promoted("F1");
    EXPECT_EQ(r.ramp.outstanding(""), 4);
    for (const char* id : {"X1", "Y0", "Y1", "Z0", "A1"})
        r.ramp.left_active(id);
    EXPECT_EQ(r.ramp.outstanding(""), 0);
    EXPECT_EQ(r.ramp.outstanding("smtp:a"), 0);
}

TEST(RecoveryRamp, AFileAdmittedButNotTakenCountsNothing) {
    Ramp r("cqmgr_recovery_rate = 5");
    EXPECT_TRUE(r.ramp.admit("X1", 0, queuefile::qmode::ready));
    // The feed could not take X1 (gone); the next one is taken.
    EXPECT_TRUE(r.ramp.admit("X2", 0, queuefile::qmode::ready));
    r.ramp.promoted("X2");
    r.ramp.promoted("X1"); // a late or stray note changes nothing
    EXPECT_EQ(r.ramp.outstanding(""), 1);
    // Let through but not taken, then taken by a pass with A: not counted.
    EXPECT_TRUE(r.ramp.admit("X3", 0, queuefile::qmode::ready));
    EXPECT_TRUE(r.ramp.admit("X3", scan_flag::all, queuefile::qmode::ready));
    r.ramp.promoted("X3");
    EXPECT_EQ(r.ramp.outstanding(""), 1);
}

TEST(RecoveryRamp, APromotedMessageLeavesTheIndex) {
    Ramp r("cqmgr_recovery_rate = 5");
    r.defer("A1", {"smtp:a"});
    EXPECT_EQ(r.ramp.index().size(), 1u);
    r.ramp.promoted("A1");
    EXPECT_EQ(r.ramp.index().size(), 0u);
}

TEST(RecoveryRamp, APassThatHeldFilesBackAsksForAnotherOneASecondLater) {
    Ramp r("cqmgr_recovery_rate = 2");
    r.admitted(ids("X", 5));
    r.ramp.pass_done();
    EXPECT_EQ(r.rescans, 0);
    r.io.run_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(r.rescans, 1);
    // A pass that held nothing back asks for nothing.
    r.clock.sec += 10;
    EXPECT_EQ(r.admitted(ids("X", 2)), 2);
    r.ramp.pass_done();
    r.io.restart();
    r.io.run_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(r.rescans, 1);
}

} // namespace
} // namespace cqmgr::qmgr
