// Golden files: queue files that the installed Postfix 3.7 wrote (see
// golden/make-golden), with what postcat printed for them.  queuefile must
// read each exactly as postcat shows it; after queuefile's in-place updates,
// postcat (when installed) must show exactly those updates.
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/test/temp_dir.hpp"
#include "postcat_compare.hpp"
#include "update_plan.hpp"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr::queuefile;
using namespace cqmgr::queuefile::golden;
namespace fs = std::filesystem;

namespace {
const std::string dir = std::string(FIXTURE_DIR) + "/golden/";

// postcat prints local time; the fixtures were made with TZ=UTC.
void utc() {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
}

// Runs postcat on `file` with flags; returns its stdout ("" if it failed).
std::string run_postcat(const std::string& flags, const std::string& file) {
    // An empty configuration directory, made once for the whole run.
    static const cqmgr::test::TempDir conf("cqmgr-postcat-conf");
    static const std::string main_cf = conf.write("main.cf", "");
    std::string cmd = "TZ=UTC postcat -c " + conf.str() + " " + flags + " " + file + " 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return "";
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
        out.append(buf, n);
    ::pclose(p);
    return out;
}

bool have_postcat() {
    return std::system("command -v postcat >/dev/null 2>&1") == 0;
}

class Golden : public testing::TestWithParam<std::string> {};
} // namespace

TEST_P(Golden, ReadsLikePostcat) {
    utc();
    std::string k = dir + GetParam();
    auto diffs = compare_all(k + ".qf", k + ".postcat", k + ".postcat-e", 7);
    for (auto& d : diffs)
        ADD_FAILURE() << d;
}

TEST_P(Golden, UpdatesReadBackLikePostcat) {
    utc();
    std::string k = dir + GetParam();
    cqmgr::test::TempDir tmp("cqmgr-golden");
    std::string copy = tmp.file(GetParam() + ".qf");
    fs::copy_file(k + ".qf", copy, fs::copy_options::overwrite_existing);
    auto plan = plan_updates(k + ".qf");
    apply_updates(copy, plan);

    // Our own reading of the updated file.
    auto original = render_like_postcat(k + ".qf", true);
    auto have = render_like_postcat(copy, true);
    EXPECT_FALSE(original.failure) << original.failure->message();
    EXPECT_FALSE(have.failure) << have.failure->message();
    auto want = expected_after(original.lines, plan);
    for (auto& d : diff_lines(want, have.lines))
        ADD_FAILURE() << "ours after update: " << d;

    // postcat's reading of it.
    if (have_postcat()) {
        std::string v = run_postcat("-o -v -e", copy), e = run_postcat("-o -e", copy);
        ASSERT_FALSE(v.empty());
        auto pc_want = expected_after(parse_postcat(slurp(k + ".postcat")), plan);
        for (auto& d : diff_lines(pc_want, parse_postcat(v)))
            ADD_FAILURE() << "postcat after update: " << d;
        std::string vf = copy + ".postcat", ef = copy + ".postcat-e";
        {
            FILE* f = std::fopen(vf.c_str(), "w");
            std::fwrite(v.data(), 1, v.size(), f);
            std::fclose(f);
            f = std::fopen(ef.c_str(), "w");
            std::fwrite(e.data(), 1, e.size(), f);
            std::fclose(f);
        }
        for (auto& d : compare_all(copy, vf, ef, 5))
            ADD_FAILURE() << "read back: " << d;
    }
}

INSTANTIATE_TEST_SUITE_P(Postfix37, Golden,
                         testing::Values("plain", "dsn", "verp", "8bit", "smtputf8", "filter",
                                         "hold", "redirect", "rcpt100", "extracted", "trace",
                                         "fullname", "milter"));

TEST(GoldenFacts, WhatTheFixturesShow) {
    // A few facts spelled out, so that a regenerated fixture set that lost
    // a feature is noticed.
    auto read = [](const std::string& kind) {
        Envelope env;
        int fd = ::open((dir + kind + ".qf").c_str(), O_RDONLY);
        EXPECT_GE(fd, 0);
        auto r = read_envelope(fd, env, 1000, kind);
        EXPECT_TRUE(r.ok) << r.error;
        ::close(fd);
        return env;
    };
    auto dsn = read("dsn");
    EXPECT_EQ(dsn.dsn_envid(), "envid-12345");
    EXPECT_EQ(dsn.dsn_ret, 2);
    EXPECT_EQ(dsn.rflags, 0x1c); // NOTIFY success|failure|delay << 1
    ASSERT_EQ(dsn.recipients.size(), 2u);
    EXPECT_EQ(dsn.recipients[0].notify_flags(), 14);
    EXPECT_EQ(read("verp").verp_delims().value_or(""), "+=");
    EXPECT_EQ(read("8bit").encoding(), "8bit");
    EXPECT_EQ(read("smtputf8").smtputf8 & 6, 6); // header and sender autodetected
    EXPECT_EQ(read("filter").filter().value_or(""), "smtp:[127.0.0.1]:10025");
    EXPECT_EQ(read("redirect").redirect().value_or(""), "redirected@test.example");
    EXPECT_EQ(read("rcpt100").recipients.size(), 100u);
    EXPECT_EQ(read("extracted").recipients.size(), 21u);
    auto trace = read("trace");
    EXPECT_EQ(trace.tflags, 0x400);
    EXPECT_GT(trace.tflags_offset, 0);
    auto milter = read("milter");
    EXPECT_EQ(milter.sender().value_or(""), "milter-sender@test.example");
    ASSERT_EQ(milter.recipients.size(), 3u); // del@ canceled, milter-added@ appended
    EXPECT_EQ(milter.recipients[2].address(), "milter-added@test.example");
    EXPECT_GT(milter.recipients[2].offset(), milter.data_offset + milter.data_size); // in the heap
    EXPECT_GT(read("plain").warn_time, 0);
}
