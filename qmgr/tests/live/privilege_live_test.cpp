// What cqmgr opens as root, under a real Postfix 3.7 (private instances in
// temporary directories; needs root and an installed Postfix, exits 77
// otherwise):
//   - the control socket of a queue manager that runs as root (master.cf
//     unprivileged column `n`): a link that mail_owner puts in the socket's
//     place right after bind() (bind_swap.cpp, preloaded) must not make
//     root chmod or chown the file it points to;
//   - a metrics port below 1024: after `postfix reload`, and after a
//     `postfix stop` and start while the old queue manager still holds the
//     port (it is stopped with SIGSTOP until the new one waits), scrapes
//     work again.
#include "fsutil.hpp"
#include "instance.hpp"
#include "net.hpp"
#include "process.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <memory>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

// One instance for one test, stopped and removed (kept on failure) at the end.
struct LiveInstance {
    std::unique_ptr<compat::WorkDir> dir;
    std::unique_ptr<compat::Instance> inst;

    explicit LiveInstance(const char* prefix) {
        dir = std::make_unique<compat::WorkDir>(std::string("/tmp/cqmgr-") + prefix + "-");
        inst = std::make_unique<compat::Instance>(dir->path());
    }
    ~LiveInstance() {
        inst->stop();
        const bool ok = !::testing::Test::HasFailure();
        dir->remove_on_exit(ok);
        if (!ok) std::cerr << "instance left in " << dir->path() << "\n";
    }
    compat::InstanceConfig config() const {
        compat::InstanceConfig cfg;
        cfg.qmgr = compat::QmgrKind::Cqmgr;
        cfg.cqmgr_path = CQMGR_DAEMON;
        cfg.smtpd_port = compat::allocate_ports(1)[0];
        cfg.master_exit_after = 300;
        return cfg;
    }
};

// Waits until `done()` holds, checking every 50 ms; false after `limit`.
template <class F> bool wait_until(F done, std::chrono::seconds limit) {
    const auto until = Clock::now() + limit;
    while (!done()) {
        if (Clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

// The queue manager among master's children (-1 if none).
pid_t queue_manager(pid_t master) {
    for (const auto& p : compat::children_of(master))
        if (compat::program_name(p) == "cqmgr" || compat::program_name(p) == "cqmgr-swap")
            return p.pid;
    return -1;
}

// True once `pid` is blocked waiting: for events (its loop) or in a sleep
// (the wait for a busy metrics port before the jail).
bool settled(pid_t pid) {
    if (compat::waits_for_events(pid)) return true;
    std::ifstream in("/proc/" + std::to_string(pid) + "/syscall");
    long nr = -1;
    in >> nr;
    return nr == SYS_nanosleep || nr == SYS_clock_nanosleep;
}

// A free port below 1024 on 127.0.0.1 (0 if none is).
uint16_t free_privileged_port() {
    for (uint16_t p = 900; p < 1000; ++p) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        int on = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(p);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
        ::close(fd);
        if (ok) return p;
    }
    return 0;
}

// True when GET /metrics on 127.0.0.1:`port` answers 200 with cqmgr's
// metrics within a few seconds.
bool scrape(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        ::close(fd);
        return false;
    }
    const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    std::string in;
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 5000) == 1) {
        char buf[65536];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return in.rfind("HTTP/1.1 200 OK\r\n", 0) == 0 &&
           in.find("\ncqmgr_messages_activated_total ") != std::string::npos;
}

// Runs a command to its end (run_command throws when it fails).
void run(const std::vector<std::string>& argv) {
    compat::SpawnOptions o;
    o.argv = argv;
    compat::run_command(o, std::chrono::seconds(60));
}

} // namespace

TEST(PrivilegeLive, ARootQueueManagerNeverChmodsOrChownsALinkInItsSocketsPlace) {
    LiveInstance li("priv-control");
    compat::InstanceConfig cfg = li.config();
    // The queue manager runs as root: master.cf's unprivileged column is n.
    cfg.qmgr_enabled = false;
    cfg.master_cf = {"qmgr unix n n n 300 1 cqmgr-swap"};
    li.inst->create(cfg);
    const std::string dir = li.dir->path();
    const std::string target = dir + "/root-file";
    const std::string report = dir + "/swap-report";
    compat::UserIds postfix = compat::lookup_user("postfix");
    compat::write_file(target, "root's own\n", 0600);
    compat::write_file(report, "", 0666);
    ::chmod(report.c_str(), 0666);
    compat::write_file(dir + "/libexec/cqmgr-swap",
                       "#!/bin/sh\n"
                       // A sanitized daemon: its runtime need not come first.
                       "ASAN_OPTIONS=verify_asan_link_order=0:$ASAN_OPTIONS\n"
                       "export ASAN_OPTIONS\n"
                       "CQMGR_SWAP_SOCKET=private/cqmgr CQMGR_SWAP_OWNER=" +
                           std::to_string(postfix.uid) + ":" + std::to_string(postfix.gid) +
                           " CQMGR_SWAP_TARGET=" + target + " CQMGR_SWAP_REPORT=" + report +
                           " LD_PRELOAD=" BIND_SWAP + " exec " CQMGR_DAEMON " \"$@\"\n",
                       0755);
    li.inst->start();
    ASSERT_TRUE(
        wait_until([&] { return compat::read_file(report).find("listen\n") != std::string::npos; },
                   std::chrono::seconds(60)))
        << "report: " << compat::read_file(report) << "\n"
        << li.inst->maillog_tail();
    // The daemon got past where it used to chmod and chown; give it its
    // first events, then look.
    pid_t qmgr = queue_manager(li.inst->master_pid());
    ASSERT_GT(qmgr, 0);
    EXPECT_TRUE(
        wait_until([&] { return compat::waits_for_events(qmgr); }, std::chrono::seconds(30)));
    const std::string events = compat::read_file(report);
    // Made with mail_owner's ids and mode 0660 by bind() itself.
    EXPECT_NE(events.find("bound mode=660 uid=" + std::to_string(postfix.uid) +
                          " gid=" + std::to_string(postfix.gid) + " "),
              std::string::npos)
        << events;
    EXPECT_NE(events.find("swapped\n"), std::string::npos) << events;
    for (const char* call : {"chmod ", "chown ", "lchown ", "fchmodat ", "fchownat "})
        EXPECT_EQ(events.find(call), std::string::npos) << events;
    struct stat st {};
    ASSERT_EQ(::lstat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_gid, 0u);
    EXPECT_EQ(compat::read_file(target), "root's own\n");
}

TEST(PrivilegeLive, APrivilegedMetricsPortComesBackAfterReloadAndRestart) {
    const uint16_t port = free_privileged_port();
    ASSERT_NE(port, 0) << "no free port below 1024";
    LiveInstance li("priv-metrics");
    compat::InstanceConfig cfg = li.config();
    cfg.main_cf = {{"in_flow_delay", "0"},
                   {"cqmgr_metrics_listen", "127.0.0.1:" + std::to_string(port)}};
    li.inst->create(cfg);
    li.inst->start();
    ASSERT_TRUE(wait_until([&] { return scrape(port); }, std::chrono::seconds(60)))
        << li.inst->maillog_tail();

    // postfix reload: master starts the new queue manager once the old one
    // is gone, so the port is free for it.
    pid_t old = queue_manager(li.inst->master_pid());
    ASSERT_GT(old, 0);
    run({"/usr/sbin/postfix", "-c", li.inst->conf_dir(), "reload"});
    ASSERT_TRUE(wait_until(
        [&] {
            pid_t now = queue_manager(li.inst->master_pid());
            return now > 0 && now != old;
        },
        std::chrono::seconds(60)))
        << li.inst->maillog_tail();
    EXPECT_TRUE(wait_until([&] { return scrape(port); }, std::chrono::seconds(30)))
        << "no metrics after postfix reload\n"
        << li.inst->maillog_tail();

    // master stopped and started again while the old queue manager still
    // holds the port: it is stopped (SIGSTOP) until the new one has come
    // as far as it goes with the port busy, then let go.
    old = queue_manager(li.inst->master_pid());
    ASSERT_GT(old, 0);
    ASSERT_EQ(::kill(old, SIGSTOP), 0);
    const pid_t old_master = li.inst->master_pid();
    ASSERT_EQ(::kill(old_master, SIGTERM), 0);
    ASSERT_TRUE(
        wait_until([&] { return !compat::process_alive(old_master); }, std::chrono::seconds(30)));
    li.inst->start();
    pid_t fresh = -1;
    ASSERT_TRUE(wait_until(
        [&] {
            fresh = queue_manager(li.inst->master_pid());
            return fresh > 0 && fresh != old && settled(fresh);
        },
        std::chrono::seconds(60)))
        << li.inst->maillog_tail();
    ::kill(old, SIGCONT); // it takes master's SIGTERM now, and exits
    ASSERT_TRUE(wait_until([&] { return !compat::process_alive(old); }, std::chrono::seconds(30)));
    EXPECT_TRUE(wait_until([&] { return scrape(port); }, std::chrono::seconds(30)))
        << "no metrics after the restart\n"
        << li.inst->maillog_tail();
}

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
    if (::geteuid() != 0 || ::access("/usr/lib/postfix/sbin/master", X_OK) != 0) {
        std::cout << "qmgr_privilege_live_tests: skipped: needs root and an installed Postfix\n";
        return 77;
    }
    compat::become_child_subreaper();
    return RUN_ALL_TESTS();
}
