// Failed store operations are tried again until they succeed or the file is
// gone, with rate-limited warnings.
#include "store_retry.hpp"

#include <gtest/gtest.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;

namespace {
struct FixedClock final : WallClock {
    int64_t now() const override { return 1000; }
    protocol::TimeVal precise() const override { return {1000, 0}; }
};

queuefile::StoreResult fail(int err) {
    return queuefile::StoreError{err, "qmgr_active_defer: rename X from active to deferred"};
}
} // namespace

TEST(StoreRetry, SuccessAtOnceRunsDoneAtOnce) {
    asio::io_context io;
    FixedClock clock;
    WarningLimiter limiter;
    StoreRetry retry(io, clock, limiter);
    int calls = 0, done = 0;
    retry.run(
        "k", [&] { return ++calls, queuefile::StoreResult{}; },
        [&](const queuefile::StoreResult& r) { done += !r; });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(done, 1);
    EXPECT_EQ(retry.pending(), 0);
}

TEST(StoreRetry, GoneIsFinalToo) {
    asio::io_context io;
    FixedClock clock;
    WarningLimiter limiter;
    StoreRetry retry(io, clock, limiter);
    bool gone = false;
    retry.run(
        "k", [] { return fail(ENOENT); },
        [&](const queuefile::StoreResult& r) { gone = r && r->gone(); });
    EXPECT_TRUE(gone);
    EXPECT_EQ(retry.pending(), 0);
}

TEST(StoreRetry, RetriedWithBackoffUntilItWorks) {
    asio::io_context io;
    FixedClock clock;
    WarningLimiter limiter;
    StoreRetry retry(io, clock, limiter);
    int calls = 0;
    bool done = false;
    auto start = std::chrono::steady_clock::now();
    retry.run(
        "k", [&] { return ++calls < 3 ? fail(ENOSPC) : queuefile::StoreResult{}; },
        [&](const queuefile::StoreResult& r) { done = !r; });
    EXPECT_EQ(retry.pending(), 1);
    EXPECT_FALSE(done);
    io.run(); // tries after 1 s, then after 2 s
    EXPECT_TRUE(done);
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(retry.pending(), 0);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}
