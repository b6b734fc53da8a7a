// The store's file operations on a scratch queue directory (the working
// directory during each test): claiming, the ways out of active/, the logs,
// and the one error convention.
#include "cqmgr/queuefile/active_queue.hpp"
#include "cqmgr/test/temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

using namespace cqmgr::queuefile;
namespace fs = std::filesystem;

namespace {
// A queue directory with the usual subdirectories, as the working directory.
struct Store : ::testing::Test {
    cqmgr::test::TempDir dir{"qstore"};
    cqmgr::test::InDirectory in{dir.path()};
    ActiveQueue store{QueueLayout({"deferred", "defer"}, 1), false};

    void SetUp() override {
        for (const char* q : {"incoming", "active", "deferred", "corrupt", "saved", "bounce"})
            fs::create_directories(q);
    }
    // A complete queue file (mode u=rwx) in `queue`.
    void file(const std::string& queue, const std::string& id) {
        std::ofstream(queue + "/" + id) << "x";
        ::chmod((queue + "/" + id).c_str(), 0700);
    }
    static int64_t mtime(const std::string& path) {
        struct stat st {};
        ::stat(path.c_str(), &st);
        return st.st_mtime;
    }
};
} // namespace

TEST_F(Store, ReadinessCheck) {
    file("incoming", "A1");
    auto r = store.check("incoming", "A1");
    EXPECT_TRUE(r.ready);
    EXPECT_TRUE(r.warning.empty());
    ::chmod("incoming/A1", 0600); // still being written
    EXPECT_FALSE(store.check("incoming", "A1").ready);
    EXPECT_TRUE(store.check("incoming", "A1").warning.empty());
    fs::create_directory_symlink("/nonexistent", "incoming/B2");
    auto link = store.check("incoming", "B2");
    EXPECT_FALSE(link.ready);
    EXPECT_EQ(link.warning,
              "incoming/B2: uid " + std::to_string(::getuid()) + ": not a regular file");
    EXPECT_TRUE(store.check("incoming", "C3").warning.empty()); // gone: no news
}

// The birth time (where the file system keeps one) is the file's making,
// which a move to another queue keeps, whatever its mtime says.
TEST_F(Store, ReadinessCheckGivesTheBirthTime) {
    file("incoming", "A1");
    const int64_t born = store.check("incoming", "A1").born;
    if (born == 0) GTEST_SKIP() << "no birth times on this file system";
    EXPECT_NEAR(static_cast<double>(born), static_cast<double>(::time(nullptr)), 5);
    fs::create_directories(fs::path(store.path("deferred", "A1")).parent_path());
    fs::rename("incoming/A1", store.path("deferred", "A1"));
    struct timeval later[2] = {{::time(nullptr) + 3600, 0}, {::time(nullptr) + 3600, 0}};
    ASSERT_EQ(::utimes(store.path("deferred", "A1").c_str(), later), 0);
    auto r = store.check("deferred", "A1");
    EXPECT_EQ(r.born, born);
    EXPECT_EQ(r.mtime, later[1].tv_sec);
}

TEST_F(Store, ClaimMovesOpensAndLocks) {
    file("incoming", "A1");
    auto c = store.claim("incoming", "A1");
    ASSERT_EQ(c.step, ActiveQueue::Claim::Step::none);
    EXPECT_TRUE(fs::exists("active/A1"));
    // Another claimant finds it locked.
    int other = ::open("active/A1", O_RDWR);
    EXPECT_NE(::flock(other, LOCK_EX | LOCK_NB), 0);
    ::close(other);
    ::close(c.fd);
}

TEST_F(Store, ClaimOfAVanishedFileIsGone) {
    auto c = store.claim("incoming", "NOPE");
    EXPECT_EQ(c.step, ActiveQueue::Claim::Step::move);
    ASSERT_TRUE(c.error);
    EXPECT_TRUE(c.error->gone());
    EXPECT_EQ(c.error->text,
              "qmgr_active_feed: NOPE: rename from incoming to active: No such file or directory");
}

TEST_F(Store, ClaimOfALockedFileSaysSo) {
    file("incoming", "A1");
    int holder = ::open("incoming/A1", O_RDWR);
    ASSERT_EQ(::flock(holder, LOCK_SH), 0); // an agent of the previous queue manager
    auto c = store.claim("incoming", "A1");
    EXPECT_EQ(c.step, ActiveQueue::Claim::Step::lock);
    EXPECT_EQ(c.fd, -1);
    ::close(holder);
}

// A later batch of a file that cannot be opened says why, with the errno:
// the caller tells a file that is gone from one that cannot be opened now.
TEST_F(Store, ReadOfAFileThatCannotBeOpenedGivesTheErrno) {
    Envelope env;
    auto gone = store.read("NOPE", env, 10);
    EXPECT_FALSE(gone.ok);
    EXPECT_EQ(gone.open_errno, ENOENT);
    EXPECT_EQ(gone.error, "open active NOPE: No such file or directory");
    fs::create_directory("active/DIR1");
    auto dir = store.read("DIR1", env, 10); // a directory opens; reading it fails
    EXPECT_FALSE(dir.ok);
    EXPECT_EQ(dir.open_errno, 0);
}

TEST_F(Store, DeferSetsTheNotBeforeTimeThenMoves) {
    file("active", "A1");
    EXPECT_FALSE(store.defer_until("A1", 2000000000));
    EXPECT_FALSE(fs::exists("active/A1"));
    EXPECT_EQ(mtime(store.path("deferred", "A1")), 2000000000);
    EXPECT_EQ(store.path("deferred", "A1").substr(0, 9), "deferred/"); // hashed: deferred/X/A1
}

TEST_F(Store, ReleaseGoesBackToIncoming) {
    file("active", "A1");
    EXPECT_FALSE(store.release("A1", 1500000000));
    EXPECT_EQ(mtime("incoming/A1"), 1500000000);
    auto gone = store.release("A1", 1);
    ASSERT_TRUE(gone);
    EXPECT_TRUE(gone->gone());
    EXPECT_EQ(gone->text.substr(0, 27), "qmgr_active_defer: update a");
}

TEST_F(Store, QuarantineAndRemove) {
    file("active", "A1");
    file("active", "B2");
    EXPECT_FALSE(store.quarantine("A1"));
    EXPECT_TRUE(fs::exists("corrupt/A1"));
    EXPECT_FALSE(store.remove("B2"));
    EXPECT_FALSE(fs::exists("active/B2"));
    auto again = store.remove("B2");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->text,
              "qmgr_active_done_3_generic: remove B2 from active: No such file or directory");
}

TEST_F(Store, DontRemoveKeepsFilesInSaved) {
    ActiveQueue keeping(QueueLayout({}, 1), true);
    file("active", "A1");
    EXPECT_FALSE(keeping.remove("A1"));
    file("active", "A1");
    EXPECT_FALSE(keeping.remove("A1"));
    EXPECT_TRUE(fs::exists("saved/A1"));
    EXPECT_TRUE(fs::exists("saved/A1+")); // the name was taken
}

TEST_F(Store, LogStates) {
    EXPECT_EQ(store.log_state("bounce", "A1"), ActiveQueue::LogState::absent);
    std::ofstream("bounce/A1").flush();
    EXPECT_EQ(store.log_state("bounce", "A1"), ActiveQueue::LogState::empty);
    std::ofstream("bounce/A1") << "recipient=x\n";
    EXPECT_EQ(store.log_state("bounce", "A1"), ActiveQueue::LogState::present);
    EXPECT_FALSE(store.remove_log("bounce", "A1"));
    EXPECT_TRUE(store.remove_log("bounce", "A1")->gone());
}

TEST_F(Store, IntactMeansReadyBits) {
    file("active", "A1");
    EXPECT_TRUE(store.intact("A1"));
    ::chmod("active/A1", 0600); // an agent found it corrupt
    EXPECT_FALSE(store.intact("A1"));
}

TEST_F(Store, LeftoversAndRecovery) {
    file("active", "A1");
    file("active", "B2");
    auto left = store.leftovers();
    EXPECT_EQ(left.size(), 2u);
    for (const auto& id : left)
        EXPECT_FALSE(store.recover(id, 1234567890));
    EXPECT_EQ(mtime("incoming/A1"), 1234567890);
    EXPECT_TRUE(store.leftovers().empty());
}
