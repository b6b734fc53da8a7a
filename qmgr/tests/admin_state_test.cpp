// The kept control settings: the file's round trip, ended settings read
// too (the reader logs them), a corrupt file ignored, and the atomic replacement
// through a directory descriptor, in a temporary directory.
#include "admin_state.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
namespace fs = std::filesystem;

namespace {

std::vector<AdminRecord> sample() {
    return {
        {core::AdminKind::hold, {"smtp", "example.com"}, {2000, "maintenance", 0}, {}},
        {core::AdminKind::hold, {"relay", ""}, {0, "", 107}, {}},
        {core::AdminKind::cap, {"", "slow.example"}, {}, {2, 0, 0}},
        {core::AdminKind::cap, {"smtp", "x.example"}, {}, {1, 1500, 0}},
    };
}

} // namespace

TEST(AdminState, EncodeDecodeRoundTrip) {
    std::string error;
    auto back = decode_admin_records(encode_admin_records(sample()), error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(*back, sample());
}

TEST(AdminState, MalformedDocumentsAreRefused) {
    for (
        std::string text : {
            "",
            "{",
            "[]",
            R"({"version":2,"suspend":[],"throttle":[]})",
            R"({"version":1,"suspend":[{"until":null,"reason":"","uid":0}],"throttle":[]})",
            R"({"version":1,"suspend":[],"throttle":[{"transport":"smtp","concurrency":2,"until":null,"uid":0}]})",
            R"({"version":1,"suspend":[],"throttle":[{"destination":"d","concurrency":0,"until":null,"uid":0}]})",
            R"({"version":1,"suspend":[{"transport":"smtp","until":"soon","reason":"","uid":0}],"throttle":[]})",
            R"({"version":1,"suspend":[{"transport":"smtp","until":-5,"reason":"","uid":0}],"throttle":[]})",
        }) {
        std::string error;
        EXPECT_FALSE(decode_admin_records(text, error)) << text;
        EXPECT_FALSE(error.empty()) << text;
    }
}

TEST(AdminState, SavesAtomicallyAndLoadsBack) {
    TempDir dir("cqmgr-admin-state");
    AdminState state(AdminState::open_directory(dir.path()), dir.path());
    EXPECT_TRUE(state.load().empty()); // no file yet
    ASSERT_TRUE(state.save(sample()));
    EXPECT_FALSE(fs::exists(dir.path() / "cqmgr-control.json.tmp"));
    EXPECT_EQ(fs::status(dir.path() / "cqmgr-control.json").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(state.load(), sample());
    ASSERT_TRUE(state.save({}));
    EXPECT_TRUE(state.load().empty());
}

TEST(AdminState, WorksThroughTheDescriptorOnceTheDirectoryIsRenamed) {
    // As in a chroot, where the directory's path no longer leads to it.
    TempDir dir("cqmgr-admin-state");
    fs::path inner = dir.path() / "data";
    fs::create_directory(inner);
    AdminState state(AdminState::open_directory(inner), inner);
    fs::rename(inner, dir.path() / "moved");
    ASSERT_TRUE(state.save(sample()));
    EXPECT_TRUE(fs::exists(dir.path() / "moved" / "cqmgr-control.json"));
    EXPECT_EQ(state.load(), sample());
}

TEST(AdminState, CorruptFileIsIgnored) {
    TempDir dir("cqmgr-admin-state");
    dir.write("cqmgr-control.json", "{\"version\":1,\"suspend\":[");
    AdminState state(AdminState::open_directory(dir.path()), dir.path());
    EXPECT_TRUE(state.load().empty());
    // Saving replaces it.
    ASSERT_TRUE(state.save(sample()));
    EXPECT_EQ(state.load(), sample());
}

TEST(AdminState, WithoutDirectoryNothingIsKept) {
    AdminState state(AdminState::open_directory("/nonexistent/cqmgr"), "/nonexistent/cqmgr");
    EXPECT_TRUE(state.load().empty());
    EXPECT_FALSE(state.save(sample()));
}
