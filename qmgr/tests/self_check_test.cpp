// cqmgr check on configuration directories written by the test: each
// problem it must report, and none on a sound configuration.  The accounts
// are checked as the daemon checks them: mail_owner is "postfix", which
// tools/setup's Postfix package creates.
#include "cqmgr/test/temp_dir.hpp"
#include "self_check.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <pwd.h>
#include <stdlib.h>
#include <string>
#include <sys/stat.h>

namespace fs = std::filesystem;
using cqmgr::qmgr::CheckFinding;
using cqmgr::qmgr::self_check;

namespace {

// A configuration directory, a queue directory and a daemon directory
// holding an executable "qmgr" and "cqmgr".
struct Instance {
    cqmgr::test::TempDir tmp{"cqmgr-check-test"};
    std::string dir = tmp.str();

    Instance() {
        fs::create_directories(dir + "/conf");
        fs::create_directories(dir + "/queue");
        fs::create_directories(dir + "/libexec");
        for (const char* d : {"qmgr", "cqmgr"}) {
            std::ofstream(dir + "/libexec/" + d) << "#!/bin/sh\n";
            ::chmod((dir + "/libexec/" + d).c_str(), 0755);
        }
        main_cf("");
        master_cf("qmgr unix n - n 300 1 cqmgr");
    }

    // main.cf: the directories, then `extra`.
    void main_cf(const std::string& extra) {
        std::ofstream(dir + "/conf/main.cf")
            << "compatibility_level = 3.6\nqueue_directory = " << dir
            << "/queue\ndaemon_directory = " << dir << "/libexec\n"
            << extra << "\n";
    }
    // master.cf: the transports main.cf's defaults name, and `qmgr_line`.
    void master_cf(const std::string& qmgr_line) {
        std::ofstream(dir + "/conf/master.cf") << qmgr_line << "\n"
                                               << "smtp unix - - n - - smtp\n"
                                                  "relay unix - - n - - smtp\n"
                                                  "local unix - n n - - local\n"
                                                  "virtual unix - n n - - virtual\n";
    }
    std::vector<CheckFinding> check() const { return self_check(dir + "/conf"); }
};

// The findings as one text, for failure messages and matching.
std::string text(const std::vector<CheckFinding>& findings) {
    std::string t;
    for (const auto& f : findings)
        t += (f.error ? "error: " : "warning: ") + f.text + "\n";
    return t;
}

bool has_error(const std::vector<CheckFinding>& findings, const std::string& part) {
    for (const auto& f : findings)
        if (f.error && f.text.find(part) != std::string::npos) return true;
    return false;
}

class SelfCheck : public ::testing::Test {
  protected:
    void SetUp() override {
        if (::getpwnam("postfix") == nullptr) GTEST_SKIP() << "no postfix account";
    }
};

TEST_F(SelfCheck, SoundConfigurationHasNoFinding) {
    Instance in;
    auto f = in.check();
    EXPECT_TRUE(f.empty()) << text(f);
}

TEST_F(SelfCheck, BadValueOfAParameterCqmgrReads) {
    Instance in;
    in.main_cf("qmgr_message_active_limit = 0\n");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "qmgr_message_active_limit")) << text(f);
}

TEST_F(SelfCheck, BadValueOfACqmgrParameter) {
    Instance in;
    in.main_cf("cqmgr_backoff_jitter = 101\n");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "cqmgr_backoff_jitter")) << text(f);
}

TEST_F(SelfCheck, ProviderScopeWithoutProviders) {
    Instance in;
    in.main_cf("cqmgr_adaptive_limit_transports = smtp\ncqmgr_adaptive_limit_scope = provider\n");
    auto f = in.check();
    ASSERT_EQ(f.size(), 1u) << text(f);
    EXPECT_FALSE(f[0].error);
    EXPECT_NE(f[0].text.find("cqmgr_adaptive_limit_scope = provider has no effect"),
              std::string::npos)
        << text(f);
}

TEST_F(SelfCheck, ReplyRuleWhoseResultIsNoAction) {
    Instance in;
    std::ofstream(in.dir + "/conf/reply_actions")
        << "/\\[TSS04\\]/ suspend destination after 3/10m for 1h\n"
        << "/blocked/ suspend galaxy for 1h\n";
    in.main_cf("cqmgr_reply_actions = pcre:" + in.dir + "/conf/reply_actions\n");
    auto f = in.check();
    ASSERT_EQ(f.size(), 1u) << text(f);
    EXPECT_FALSE(f[0].error);
    EXPECT_NE(f[0].text.find("reply_actions, line 2: bad result \"suspend galaxy for 1h\": "
                             "unknown scope \"galaxy\""),
              std::string::npos)
        << text(f);
}

TEST_F(SelfCheck, BackoffRuleWhoseProfileIsNone) {
    Instance in;
    std::ofstream(in.dir + "/conf/reply_actions")
        << "/\\[TSS04\\]/ backoff slow destination for 1h\n"
        << "/4\\.7\\.28/ backoff fast destination for 1h\n"
        << "/4\\.2\\.1/ backoff broken destination for 1h\n";
    in.main_cf("cqmgr_reply_actions = pcre:" + in.dir + "/conf/reply_actions\n" +
               "cqmgr_backoff_profiles = inline:{ slow=concurrency=2, broken=rate=fast }\n");
    auto f = in.check();
    ASSERT_EQ(f.size(), 2u) << text(f);
    EXPECT_NE(f[0].text.find("reply_actions, line 2: bad result \"backoff fast destination for "
                             "1h\": no profile \"fast\" in cqmgr_backoff_profiles"),
              std::string::npos)
        << text(f);
    EXPECT_NE(f[1].text.find("line 3: bad result \"backoff broken destination for 1h\": "
                             "cqmgr_backoff_profiles: bad value \"rate=fast\" for \"broken\""),
              std::string::npos)
        << text(f);
}

TEST_F(SelfCheck, BadValueGivenOnTheQmgrLine) {
    Instance in;
    in.master_cf("qmgr unix n - n 300 1 cqmgr -o cqmgr_recovery_rate=-1");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "cqmgr_recovery_rate")) << text(f);
}

TEST_F(SelfCheck, BadPerTransportValue) {
    Instance in;
    in.main_cf("relay_destination_concurrency_limit = many\n");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "relay_destination_concurrency_limit")) << text(f);
}

TEST_F(SelfCheck, QmgrCommandMissingFromDaemonDirectory) {
    Instance in;
    fs::remove(in.dir + "/libexec/cqmgr");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "/libexec/cqmgr is missing or not executable")) << text(f);
}

TEST_F(SelfCheck, QmgrProcessLimitNotOne) {
    Instance in;
    in.master_cf("qmgr unix n - n 300 2 cqmgr");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "requires a process limit of 1")) << text(f);
}

TEST_F(SelfCheck, NoQmgrService) {
    Instance in;
    in.master_cf("pickup unix n - n 60 1 pickup");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "no qmgr service")) << text(f);
}

TEST_F(SelfCheck, TransportWithoutMasterCfEntry) {
    Instance in;
    in.main_cf("default_transport = outbound\n");
    auto f = in.check();
    EXPECT_TRUE(
        has_error(f, "default_transport = outbound: master.cf has no unix service outbound"))
        << text(f);
}

TEST_F(SelfCheck, ChrootedQmgrWithRedisSocketOutsideTheJail) {
    Instance in;
    in.master_cf("qmgr unix n - y 300 1 cqmgr");
    in.main_cf("cqmgr_redis_server = unix:/run/redis/redis.sock\n");
    auto f = in.check();
    EXPECT_TRUE(has_error(f, "out of reach of a chrooted qmgr service")) << text(f);
}

TEST_F(SelfCheck, RedisSentinelsByAddressNeedNoResolver) {
    Instance in;
    in.master_cf("qmgr unix n - y 300 1 cqmgr");
    in.main_cf("cqmgr_redis_server = sentinel:mail@10.0.0.1:26379,[::1]\n");
    auto f = in.check();
    EXPECT_EQ(text(f).find("may not resolve"), std::string::npos) << text(f);
    Instance named;
    named.master_cf("qmgr unix n - y 300 1 cqmgr");
    named.main_cf("cqmgr_redis_server = sentinel:mail@10.0.0.1,sentinel.example\n");
    f = named.check();
    EXPECT_NE(text(f).find("may not resolve the host name"), std::string::npos) << text(f);
    Instance bad;
    bad.main_cf("cqmgr_redis_server = sentinel:mail@\n");
    f = bad.check();
    EXPECT_TRUE(has_error(f, "cqmgr_redis_server = sentinel:mail@: not host:port")) << text(f);
}

TEST_F(SelfCheck, UnreadableMainCf) {
    Instance in;
    fs::remove(in.dir + "/conf/main.cf");
    auto f = in.check();
    ASSERT_FALSE(f.empty());
    EXPECT_TRUE(f.front().error) << text(f);
}

} // namespace
