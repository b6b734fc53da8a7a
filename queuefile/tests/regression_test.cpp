// Inputs that once crashed or hung a reader (found by the fuzzer, or by
// hand) stay here for good: every file in fixtures/regressions/ must be
// read by read_envelope() and RecordWalker to a result or a typed error.
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/record_walker.hpp"

#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::queuefile;
namespace fs = std::filesystem;

TEST(Regressions, EveryStoredInputEndsCleanly) {
    fs::path dir = fs::path(FIXTURE_DIR) / "regressions";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    int files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
        ++files;
        std::string path = entry.path();
        int fd = ::open(path.c_str(), O_RDONLY);
        ASSERT_GE(fd, 0) << path;
        Envelope env;
        auto r = read_envelope(fd, env, 3, path);
        for (int batches = 0; r.ok && env.rcpt_offset && batches < 100000; ++batches)
            r = read_envelope(fd, env, 3, path);
        if (!r.ok) {
            ASSERT_TRUE(r.failure) << path;
            EXPECT_FALSE(r.failure->expected.empty()) << path;
            EXPECT_EQ(r.failure->path, path);
        }
        for (bool follow : {true, false}) {
            RecordWalker w(fd, path, WalkOptions{follow, true});
            WalkedRecord rec;
            while (w.next(rec)) {
            }
        }
        ::close(fd);
    }
    EXPECT_GT(files, 0);
}
