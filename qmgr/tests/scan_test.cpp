// Scan requests, the in-flow token policy and the warning limiter: the
// pure parts of scanning and feeding.
#include "cqmgr/test/temp_dir.hpp"
#include "master_link.hpp"
#include "scan.hpp"
#include "warning_limiter.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::qmgr;
namespace fs = std::filesystem;

namespace {
// A scratch queue directory with a few files, as the working directory.
struct ScratchQueue {
    cqmgr::test::TempDir dir{"cqmgr-scan"};
    cqmgr::test::InDirectory in{dir.path()};
    ScratchQueue() {
        fs::create_directories("incoming");
        for (const char* id : {"A1", "B2"})
            std::ofstream(fs::path("incoming") / id) << "x";
    }
};

int count_pass(Scan& s) {
    int n = 0;
    while (s.next())
        ++n;
    return n;
}
} // namespace

TEST(Scan, FullAppliesToTheNextPassOnly) {
    ScratchQueue q;
    Scan s("incoming");
    s.request(scan_flag::start);
    EXPECT_EQ(s.passes_begun(), 1u);
    s.request(scan_flag::start | scan_flag::full); // during the pass: for the next one
    EXPECT_EQ(s.flags(), 0);
    EXPECT_EQ(count_pass(s), 4); // both passes: the restart follows at once
    EXPECT_EQ(s.passes_begun(), 2u);
    s.request(scan_flag::start | scan_flag::full);
    EXPECT_EQ(s.flags(), scan_flag::full);
    EXPECT_EQ(s.passes_begun(), 3u);
}

TEST(Scan, RunsOnlyWhenStarted) {
    ScratchQueue q;
    Scan s("incoming");
    EXPECT_FALSE(s.next());
    s.request(scan_flag::all); // a modifier alone starts nothing
    EXPECT_FALSE(s.running());
    s.request(scan_flag::start);
    EXPECT_TRUE(s.running());
    EXPECT_EQ(s.flags(), scan_flag::all); // kept for the pass
    EXPECT_EQ(count_pass(s), 2);
    EXPECT_FALSE(s.running());
}

TEST(Scan, StartDuringAPassRestartsAtItsEnd) {
    ScratchQueue q;
    Scan s("incoming");
    s.request(scan_flag::start);
    ASSERT_TRUE(s.next());
    s.request(scan_flag::start | scan_flag::flush);
    EXPECT_EQ(s.flags() & scan_flag::flush, scan_flag::flush); // applies now too
    ASSERT_TRUE(s.next());
    // The end of the first pass begins the second, with the flush flag.
    ASSERT_TRUE(s.next());
    EXPECT_EQ(s.flags() & scan_flag::flush, scan_flag::flush);
    ASSERT_TRUE(s.next());
    EXPECT_FALSE(s.next());
    EXPECT_EQ(s.flags() & scan_flag::flush, scan_flag::flush);
    s.request(scan_flag::start);
    EXPECT_EQ(s.flags(), 0); // a fresh pass without modifiers
}

TEST(Scan, RestartLaterKeepsTheFlagsForTheNextPass) {
    ScratchQueue q;
    Scan s("incoming");
    s.request(scan_flag::start | scan_flag::all);
    ASSERT_TRUE(s.next());
    s.restart_later();
    EXPECT_FALSE(s.running());
    EXPECT_EQ(count_pass(s), 2);
    EXPECT_EQ(s.flags(), scan_flag::all);
}

TEST(Scan, WatchedPassesArePartialUnlessFullOrA) {
    ScratchQueue q;
    Scan s("incoming");
    s.watch_directories();
    s.request(scan_flag::start | scan_flag::full);
    EXPECT_FALSE(s.partial());
    EXPECT_EQ(count_pass(s), 2);
    s.request(scan_flag::start);
    EXPECT_TRUE(s.partial());
    // An A during a partial pass restarts it as a complete one at once.
    s.request(scan_flag::all);
    EXPECT_FALSE(s.running());
    ASSERT_TRUE(s.next());
    EXPECT_FALSE(s.partial());
    EXPECT_EQ(s.flags(), scan_flag::all);
    EXPECT_EQ(s.passes_begun(), 3u);
    EXPECT_EQ(s.passes_ended(), 1u);
}

TEST(FlowTokens, NoFlowControlWithoutInFlowDelay) {
    EXPECT_EQ(flow_token_change(0, 0, 100, true, false), 0);
    EXPECT_EQ(flow_token_change(0, 0, 100, false, false), 0);
    EXPECT_EQ(flow_token_change(0, 500, 100, false, false), 0);
}

TEST(FlowTokens, OnePerIncomingMessageOrATopUp) {
    EXPECT_EQ(flow_token_change(1, 10, 100, true, true), 1);
    EXPECT_EQ(flow_token_change(1, 10, 100, false, true), 0);   // scan still running
    EXPECT_EQ(flow_token_change(1, 10, 100, false, false), 90); // top up
    EXPECT_EQ(flow_token_change(1, 100, 100, true, false), 0);
    EXPECT_EQ(flow_token_change(1, 130, 100, false, false), -30); // surplus taken back
}

TEST(WarningLimiter, OneWarningPerKindAndInterval) {
    WarningLimiter limiter(60);
    EXPECT_EQ(limiter.filter("k", "first", 100), "first");
    EXPECT_EQ(limiter.filter("k", "second", 110), std::nullopt);
    EXPECT_EQ(limiter.filter("other", "x", 110), "x");
    EXPECT_EQ(limiter.filter("k", "third", 159), std::nullopt);
    EXPECT_EQ(limiter.filter("k", "fourth", 160), "fourth (2 more like this in the last 60 s)");
    EXPECT_EQ(limiter.filter("k", "fifth", 300), "fifth");
}
