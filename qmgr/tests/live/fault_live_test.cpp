// cqmgr under a real Postfix 3.7 when resources run short: a private
// instance runs cqmgr as its qmgr with a preloaded library (fault_shim.cpp)
// that counts its connections to Postfix's services and makes opens of
// active queue files fail on demand.  Needs root and an installed Postfix;
// exits 77 (skipped) otherwise.
#include "fsutil.hpp"
#include "instance.hpp"
#include "net.hpp"
#include "process.hpp"
#include "smtp_client.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace {

// One private Postfix instance whose qmgr is cqmgr with the shim preloaded.
struct LiveCqmgr {
    std::unique_ptr<compat::WorkDir> dir;
    std::unique_ptr<compat::Instance> inst;
    std::uint16_t smtpd_port = 0;
    bool ok = false;

    // `main_cf`: settings after the defaults; `shim_env`: the shim's
    // variables besides CQMGR_SHIM_REPORT.
    LiveCqmgr(std::vector<std::pair<std::string, std::string>> main_cf,
              const std::map<std::string, std::string>& shim_env) {
        dir = std::make_unique<compat::WorkDir>("/tmp/cqmgr-fault-live-");
        std::string wrapper = dir->path() + "/cqmgr-wrapper";
        std::ostringstream w;
        // In a sanitizer build the daemon links ASan's runtime, which wants
        // to come first in the list of libraries: here the shim does.
        w << "#!/bin/bash\n"
          << "export LD_PRELOAD=" << CQMGR_FAULT_SHIM << "\n"
          << "export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0\n"
          << "export CQMGR_SHIM_REPORT=" << report_path() << "\n";
        for (const auto& [k, v] : shim_env)
            w << "export " << k << "=" << v << "\n";
        w << "exec -a cqmgr " << CQMGR_DAEMON << " \"$@\"\n";
        compat::write_file(wrapper, w.str(), 0755);
        inst = std::make_unique<compat::Instance>(dir->path());
        compat::InstanceConfig cfg;
        cfg.qmgr = compat::QmgrKind::Cqmgr;
        cfg.cqmgr_path = wrapper;
        cfg.smtpd_port = smtpd_port = compat::allocate_ports(1)[0];
        cfg.main_cf = {{"in_flow_delay", "0"}};
        for (auto& kv : main_cf)
            cfg.main_cf.push_back(std::move(kv));
        cfg.master_exit_after = 300;
        inst->create(cfg);
        inst->start();
    }
    ~LiveCqmgr() {
        if (inst) inst->stop();
        dir->remove_on_exit(ok);
        if (!ok) std::cerr << "instance left in " << dir->path() << "\n";
    }

    std::string report_path() const { return dir->path() + "/shim-report"; }
    std::string queue(const std::string& rel) const { return inst->queue_dir() + "/" + rel; }

    // The peak of connections to each service that the shim saw.
    std::map<std::string, int> peaks() const {
        std::map<std::string, int> out;
        std::string text;
        if (!compat::read_file_if_exists(report_path(), text)) return out;
        std::istringstream in(text);
        std::string name;
        int n = 0;
        while (in >> name >> n)
            out[name] = n;
        return out;
    }

    // Maillog lines that contain each of `parts`.
    int count(std::initializer_list<std::string> parts) const {
        std::string text;
        if (!compat::read_file_if_exists(inst->maillog_path(), text)) return 0;
        int n = 0;
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            bool all = true;
            for (const auto& p : parts)
                all = all && line.find(p) != std::string::npos;
            n += all;
        }
        return n;
    }
    // Waits up to `secs` for `pred`.
    bool wait(int secs, const std::function<bool()>& pred) const {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(secs);
        while (std::chrono::steady_clock::now() < deadline) {
            if (pred()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        return pred();
    }

    // One message from alice@example.org to `rcpts`.
    void send(const std::vector<std::string>& rcpts) const {
        compat::SmtpClient c(smtpd_port, std::chrono::seconds(30));
        c.ehlo("client.example");
        c.pipeline_recipients(50);
        c.send_mail("alice@example.org", rcpts, "Subject: fault test\n\nbody\n");
        c.quit();
    }
};

std::vector<std::string> recipients(int n, const std::string& domain) {
    std::vector<std::string> v;
    for (int i = n; i >= 1; --i) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "u%03d", i);
        v.push_back(std::string(buf) + "@" + domain);
    }
    return v;
}

// A unix socket at `path` that takes connections into its backlog and never
// answers: a service that hangs.
int silent_listener(const std::string& path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 512) != 0 ||
        ::chmod(path.c_str(), 0666) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

} // namespace

// A batch of 300 recipients to a route that is dead, with the retry service
// dead as well: cqmgr defers each recipient itself, through the defer
// service (one request per connection) and the flush service.  Before,
// every recipient opened its own connection at once.
TEST(FaultLive, SelfDeferralsOfABigBatchHoldFewServiceConnections) {
    LiveCqmgr live({{"transport_maps", "inline:{ gone.example=nosuch: }"},
                    {"fast_flush_domains", "gone.example"}},
                   {});
    // The retry service cannot be reached: its transport dies on first use.
    std::filesystem::rename(live.queue("private/retry"), live.queue("private/retry.stopped"));
    live.send({"first@gone.example"});
    ASSERT_TRUE(live.wait(60, [&] {
        return live.count({"to=<first@gone.example>", "status=deferred"}) == 1;
    })) << live.inst->maillog_tail();
    live.send(recipients(300, "gone.example"));
    ASSERT_TRUE(live.wait(120, [&] {
        return live.count({"to=<u", "@gone.example>", "status=deferred"}) == 300;
    })) << live.inst->maillog_tail();
    auto peaks = live.peaks();
    EXPECT_GE(peaks["defer"], 1);
    EXPECT_LE(peaks["defer"], 8);
    EXPECT_GE(peaks["flush"], 1);
    EXPECT_LE(peaks["flush"], 8);
    EXPECT_TRUE(live.wait(30, [&] { return live.inst->queue_counts()["deferred"] == 2; }));
    EXPECT_EQ(live.count({"service failure"}), 0) << live.inst->maillog_tail();
    live.ok = !testing::Test::HasFailure();
}

// 100 control flushes of distinct sites while flush(8) hangs: a few
// connections wait for it, a bounded number of flushes queue behind them,
// and the rest are refused at once.  Before, each opened its own connection.
TEST(FaultLive, ControlFlushesHoldFewFlushConnections) {
    LiveCqmgr live({{"fast_flush_domains", "example"}}, {});
    std::filesystem::rename(live.queue("public/flush"), live.queue("public/flush.real"));
    int silent = silent_listener(live.queue("public/flush"));
    ASSERT_GE(silent, 0);
    // The control socket appears once cqmgr runs.
    int fd = -1;
    for (int i = 0; i < 300 && fd < 0; ++i) {
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un sa{};
        sa.sun_family = AF_UNIX;
        std::strncpy(sa.sun_path, live.queue("private/cqmgr").c_str(), sizeof sa.sun_path - 1);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
            ::close(fd);
            fd = -1;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    ASSERT_GE(fd, 0) << live.inst->maillog_tail();
    int busy = 0, replies = 0;
    std::string in;
    for (int i = 0; i < 100; ++i) {
        std::string req = "flush site" + std::to_string(i) + ".example\n";
        ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL),
                  static_cast<ssize_t>(req.size()));
        while (in.find('\n') == std::string::npos) {
            pollfd p{fd, POLLIN, 0};
            ASSERT_EQ(::poll(&p, 1, 30000), 1) << "no reply to " << req;
            char buf[4096];
            ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            ASSERT_GT(n, 0);
            in.append(buf, static_cast<size_t>(n));
        }
        std::string line = in.substr(0, in.find('\n'));
        in.erase(0, line.size() + 1);
        ++replies;
        busy += line.find("too many flushes") != std::string::npos;
    }
    ::close(fd);
    EXPECT_EQ(replies, 100);
    EXPECT_EQ(busy, 100 - 64);
    // Give the daemon a moment to open what it would open.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto peaks = live.peaks();
    EXPECT_GE(peaks["flush"], 1);
    EXPECT_LE(peaks["flush"], 8);
    ::close(silent);
    live.ok = !testing::Test::HasFailure();
}

// A later recipient batch whose file cannot be opened (EIO, then EMFILE):
// the message stays in active/ and its batch is read again, and every
// recipient is delivered.  Before, it went to corrupt/ with its recipients
// undelivered.
void later_batch_open_fails(int err) {
    LiveCqmgr live(
        {{"transport_maps", "inline:{ dest.example=discard: }"},
         {"qmgr_message_active_limit", "10"},
         {"qmgr_message_recipient_limit", "20"}},
        {{"CQMGR_SHIM_FAIL_OPENS", "2"}, {"CQMGR_SHIM_FAIL_ERRNO", std::to_string(err)}});
    live.send(recipients(60, "dest.example"));
    ASSERT_TRUE(live.wait(60, [&] {
        return live.count({"to=<u", "@dest.example>", "status=sent"}) == 60 ||
               live.inst->queue_counts()["corrupt"] > 0;
    })) << live.inst->maillog_tail();
    EXPECT_EQ(live.count({"to=<u", "@dest.example>", "status=sent"}), 60)
        << live.inst->maillog_tail();
    EXPECT_EQ(live.inst->queue_counts()["corrupt"], 0u);
    EXPECT_TRUE(live.wait(30, [&] { return live.inst->queue_counts()["active"] == 0; }));
    EXPECT_GE(live.count({"warning: open active ", std::string(": ") + std::strerror(err)}), 1)
        << live.inst->maillog_tail();
    live.ok = !testing::Test::HasFailure();
}

TEST(FaultLive, ALaterBatchThatCannotBeOpenedIsReadAgain_EIO) {
    later_batch_open_fails(EIO);
}

TEST(FaultLive, ALaterBatchThatCannotBeOpenedIsReadAgain_EMFILE) {
    later_batch_open_fails(EMFILE);
}

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
    if (::geteuid() != 0 || ::access("/usr/lib/postfix/sbin/master", X_OK) != 0) {
        std::cout << "qmgr_fault_live_tests: skipped: needs root and an installed Postfix\n";
        return 77;
    }
    compat::become_child_subreaper();
    return RUN_ALL_TESTS();
}
