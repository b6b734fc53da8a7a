// Socket discovery against the installed postconf, with private
// configuration directories.
#include "discovery.hpp"
#include "samples.hpp"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace cqmgr::ctl;
using cqmgr::ctl::test::write_settled;
using cqmgr::test::TempDir;

namespace {

bool have_postconf() {
    return ::access("/usr/sbin/postconf", X_OK) == 0 ||
           std::system("command -v postconf >/dev/null 2>&1") == 0;
}

// Unsets MAIL_CONFIG for one test and puts the old value back.
class MailConfigGuard {
  public:
    MailConfigGuard() {
        if (const char* v = std::getenv("MAIL_CONFIG")) old_ = v;
        ::unsetenv("MAIL_CONFIG");
    }
    ~MailConfigGuard() {
        if (old_)
            ::setenv("MAIL_CONFIG", old_->c_str(), 1);
        else
            ::unsetenv("MAIL_CONFIG");
    }

  private:
    std::optional<std::string> old_;
};

class Discovery : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!have_postconf()) GTEST_SKIP() << "postconf is not installed";
    }
    MailConfigGuard env;
    TempDir dir{"ctl-test"};
};

} // namespace

TEST(SocketPath, RelativeToTheQueueDirectory) {
    EXPECT_EQ(socket_path("/var/spool/postfix", "private/cqmgr"),
              "/var/spool/postfix/private/cqmgr");
    EXPECT_EQ(socket_path("/q/", "x"), "/q/x");
    EXPECT_EQ(socket_path("/q", "/run/cqmgr.sock"), "/run/cqmgr.sock");
    EXPECT_THROW(socket_path("/q", ""), DiscoveryError);
}

TEST_F(Discovery, DefaultSocketUnderTheConfiguredQueueDirectory) {
    write_settled(dir, "main.cf", "queue_directory = " + dir.str() + "/queue\n");
    const SocketLocation loc = find_socket(dir.str());
    EXPECT_EQ(loc.path, dir.str() + "/queue/private/cqmgr");
    EXPECT_NE(loc.origin.find("default"), std::string::npos) << loc.origin;
}

TEST_F(Discovery, PostconfsDefaultQueueDirectory) {
    write_settled(dir, "main.cf", "# nothing set\n");
    EXPECT_EQ(find_socket(dir.str()).path, "/var/spool/postfix/private/cqmgr");
}

// postconf does not know cqmgr_control_socket; main.cf's value counts all
// the same, expanded as the daemon expands it.
TEST_F(Discovery, ValueFromMainCf) {
    write_settled(dir, "main.cf", "queue_directory = /q\ncqmgr_control_socket = public/ctl\n");
    EXPECT_EQ(find_socket(dir.str()).path, "/q/public/ctl");
    write_settled(dir, "main.cf",
                  "queue_directory = /q\n"
                  "cqmgr_control_socket = $data_directory/ctl\n"
                  "data_directory = /d\n");
    const SocketLocation loc = find_socket(dir.str());
    EXPECT_EQ(loc.path, "/d/ctl");
    EXPECT_NE(loc.origin.find("main.cf, line 2"), std::string::npos) << loc.origin;
    write_settled(dir, "main.cf",
                  "queue_directory = /q\n"
                  "cqmgr_control_socket = ${queue_directory}/private/x\n");
    EXPECT_EQ(find_socket(dir.str()).path, "/q/private/x");
}

TEST_F(Discovery, EmptyValueTurnsTheSocketOff) {
    write_settled(dir, "main.cf", "cqmgr_control_socket =\n");
    EXPECT_THROW(find_socket(dir.str()), DiscoveryError);
}

TEST_F(Discovery, MailConfigWhenNoDirectoryIsGiven) {
    write_settled(dir, "main.cf", "queue_directory = /from/env\n");
    ::setenv("MAIL_CONFIG", dir.str().c_str(), 1);
    EXPECT_EQ(find_socket(std::nullopt).path, "/from/env/private/cqmgr");
}

TEST_F(Discovery, PostconfsComplaintIsReported) {
    try {
        find_socket(dir.str() + "/missing");
        FAIL();
    } catch (const DiscoveryError& e) {
        EXPECT_NE(std::string(e.what()).find("postconf failed: postconf: fatal: open"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(find_socket(dir.str(), "/nonexistent/postconf"), DiscoveryError);
}
