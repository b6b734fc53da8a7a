// The control socket under a real Postfix 3.7: a private instance runs
// cqmgr as its qmgr (master.cf as stock has it: unprivileged, not
// chrooted), and the test asks it over private/cqmgr as root.  Needs root
// and an installed Postfix; exits 77 (skipped) otherwise.
#include "fsutil.hpp"
#include "instance.hpp"
#include "net.hpp"
#include "process.hpp"

#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace {

std::unique_ptr<compat::WorkDir> g_dir;
std::unique_ptr<compat::Instance> g_inst;

std::string socket_path() {
    return g_inst->queue_dir() + "/private/cqmgr";
}

// Connects to the control socket; -1 when nobody listens.
int connect_control() {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, socket_path().c_str(), sizeof sa.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) return fd;
    ::close(fd);
    return -1;
}

// One request and its reply line, parsed; null when there was none.
nlohmann::json ask(int fd, const std::string& request) {
    std::string out = request + "\n";
    if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size()))
        return nullptr;
    std::string in;
    pollfd p{fd, POLLIN, 0};
    while (in.find('\n') == std::string::npos && ::poll(&p, 1, 30000) == 1) {
        char buf[4096];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
    }
    auto nl = in.find('\n');
    return nl == std::string::npos ? nlohmann::json(nullptr)
                                   : nlohmann::json::parse(in.substr(0, nl));
}

// cqmgr starts when master does; its socket appears once it runs.
int wait_for_control() {
    for (int i = 0; i < 300; ++i) {
        int fd = connect_control();
        if (fd >= 0) return fd;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
}

} // namespace

TEST(ControlLive, SocketBelongsToMailOwner) {
    int fd = wait_for_control();
    ASSERT_GE(fd, 0) << "no control socket at " << socket_path() << "\n" << g_inst->maillog_tail();
    ::close(fd);
    struct stat st {};
    ASSERT_EQ(::lstat(socket_path().c_str(), &st), 0);
    compat::UserIds postfix = compat::lookup_user("postfix");
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0660u);
    EXPECT_EQ(st.st_uid, postfix.uid);
    EXPECT_EQ(st.st_gid, postfix.gid);
}

TEST(ControlLive, SummaryAndQueuesFromTheRunningDaemon) {
    int fd = wait_for_control();
    ASSERT_GE(fd, 0) << g_inst->maillog_tail();
    auto s = ask(fd, "summary");
    ASSERT_TRUE(s.is_object()) << g_inst->maillog_tail();
    EXPECT_EQ(s["ok"], true) << s.dump();
    EXPECT_GT(s["pid"].get<int64_t>(), 0);
    EXPECT_TRUE(compat::process_alive(static_cast<pid_t>(s["pid"].get<int64_t>())));
    EXPECT_EQ(s["version"].get<std::string>().rfind("cqmgr ", 0), 0u) << s.dump();
    EXPECT_EQ(s["active"]["message_limit"], 20000);
    // One connection carries many requests.
    auto q = ask(fd, "queues");
    EXPECT_EQ(q["ok"], true) << q.dump();
    EXPECT_TRUE(q["transports"].is_array());
    EXPECT_EQ(ask(fd, "message 0123ABC"),
              (nlohmann::json{{"ok", false}, {"error", "no such message in the active queue"}}));
    // The commands reach the scheduler and are kept in the state store.
    auto sus = ask(fd, "suspend smtp for 1h reason live test");
    EXPECT_EQ(sus["ok"], true) << sus.dump();
    ASSERT_TRUE(sus["changed"].is_array()) << sus.dump();
    ASSERT_EQ(sus["changed"].size(), 1u) << sus.dump();
    EXPECT_EQ(sus["changed"][0]["suspended"], true) << sus.dump();
    EXPECT_EQ(sus["changed"][0]["reason"], "live test") << sus.dump();
    auto res = ask(fd, "resume smtp");
    EXPECT_EQ(res["ok"], true) << res.dump();
    EXPECT_EQ(res["changed"].size(), 1u) << res.dump();
    ::close(fd);
}

// True when the daemon closes `fd` within `within` (reading and dropping
// whatever comes first).
bool closed_by_daemon(int fd, std::chrono::milliseconds within) {
    auto deadline = std::chrono::steady_clock::now() + within;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) != 1) return false;
        char buf[256];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return true;
    }
}

TEST(ControlLive, AQuietClientIsClosedAfterMaxIdleAndAPollingOneIsNot) {
    // main.cf has max_idle = 2 (see main()).
    int quiet = wait_for_control();
    ASSERT_GE(quiet, 0) << g_inst->maillog_tail();
    auto t0 = std::chrono::steady_clock::now();
    int poller = connect_control();
    ASSERT_GE(poller, 0);
    // Not closed early: the daemon's 2 s start when it accepts, after t0.
    pollfd p{quiet, POLLIN, 0};
    bool early = ::poll(&p, 1, 0) == 1;
    if (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1900)) {
        EXPECT_FALSE(early) << "closed before max_idle";
    }
    // Once a second, for 5 s: each request starts the wait afresh.
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(ask(poller, "summary")["ok"], true) << "poll " << i;
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    EXPECT_EQ(ask(poller, "summary")["ok"], true);
    // The quiet one is gone by now (or goes soon on a loaded machine).
    EXPECT_TRUE(closed_by_daemon(quiet, std::chrono::seconds(30)));
    ::close(quiet);
    ::close(poller);
}

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
    if (::geteuid() != 0 || ::access("/usr/lib/postfix/sbin/master", X_OK) != 0) {
        std::cout << "qmgr_control_live_tests: skipped: needs root and an installed Postfix\n";
        return 77;
    }
    compat::become_child_subreaper();
    int rc = 1;
    try {
        g_dir = std::make_unique<compat::WorkDir>("/tmp/cqmgr-control-live-");
        g_inst = std::make_unique<compat::Instance>(g_dir->path());
        compat::InstanceConfig cfg;
        cfg.qmgr = compat::QmgrKind::Cqmgr;
        cfg.cqmgr_path = CQMGR_DAEMON;
        cfg.smtpd_port = compat::allocate_ports(1)[0];
        // max_idle: the control socket closes connections that stay
        // quiet this long (AQuietClientIsClosed...).
        cfg.main_cf = {{"in_flow_delay", "0"}, {"max_idle", "2"}};
        cfg.master_exit_after = 300;
        g_inst->create(cfg);
        g_inst->start();
        rc = RUN_ALL_TESTS();
    } catch (const std::exception& e) {
        std::cerr << "qmgr_control_live_tests: " << e.what() << "\n";
    }
    if (g_inst) g_inst->stop();
    if (g_dir) {
        g_dir->remove_on_exit(rc == 0);
        if (rc != 0)
            std::cerr << "qmgr_control_live_tests: instance left in " << g_dir->path() << "\n";
    }
    return rc;
}
