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

#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <memory>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/time.h>
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

namespace {
// A GET of `path` on 127.0.0.1:`port`: the status code (0: no answer within
// five seconds) and the body.
std::pair<int, std::string> http_get(uint16_t port, const std::string& path) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string in;
    const std::string req = "GET " + path + " HTTP/1.0\r\n\r\n";
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 &&
        ::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
        pollfd p{fd, POLLIN, 0};
        char buf[65536];
        ssize_t n = 0;
        while (::poll(&p, 1, 5000) == 1 && (n = ::recv(fd, buf, sizeof buf, 0)) > 0)
            in.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    // "HTTP/1.1 200 OK"
    if (in.size() < 12 || in.rfind("HTTP/1.", 0) != 0) return {0, ""};
    size_t body = in.find("\r\n\r\n");
    return {std::atoi(in.c_str() + 9), body == std::string::npos ? "" : in.substr(body + 4)};
}

int http_status(uint16_t port, const std::string& path) {
    return http_get(port, path).first;
}

// The value of the sample `series` (name and labels as scraped) in
// /metrics; -1 when there is none.
double scraped(uint16_t port, const std::string& series) {
    std::istringstream in(http_get(port, "/metrics").second);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    return -1;
}

// Makes `n` files in deferred/ (hashed one level deep, as Postfix does
// short queue IDs) named from `first` on, not due for an hour: the deferred
// scan only looks at them (their contents are never read).
void make_deferred(const std::string& deferred, int first, int n) {
    const auto later = ::time(nullptr) + 3600;
    for (int i = first; i < first + n; ++i) {
        char id[16];
        std::snprintf(id, sizeof id, "%X%07X", 1 + i % 15, i);
        const std::string dir = deferred + "/" + id[0];
        std::filesystem::create_directories(dir);
        compat::write_file(dir + "/" + id, "x", 0700);
        struct timeval t[2] = {{later, 0}, {later, 0}};
        ::utimes((dir + "/" + id).c_str(), t);
    }
}
} // namespace

// The acceptance of the deferred queue's gauge: on a queue of 10,000
// deferred messages, cqmgr_queue_messages{queue="deferred"} equals the
// number of files in deferred/ within one queue_run_delay after a change
// (files put there, files removed as postsuper -d does), with and without
// the due index.
TEST(FaultLive, TheDeferredGaugeFollowsTheQueue) {
    using std::chrono::steady_clock;
    constexpr int queue_run_delay = 6;
    for (const char* index : {"no", "yes"}) {
        SCOPED_TRACE(std::string("cqmgr_deferred_due_index = ") + index);
        const uint16_t port = compat::allocate_ports(1)[0];
        LiveCqmgr live({{"cqmgr_metrics_listen", "127.0.0.1:" + std::to_string(port)},
                        {"queue_run_delay", std::to_string(queue_run_delay) + "s"},
                        {"cqmgr_deferred_due_index", index}},
                       {});
        const std::string deferred = live.queue("deferred");
        const std::string series = "cqmgr_queue_messages{queue=\"deferred\"}";
        ASSERT_TRUE(live.wait(60, [&] { return scraped(port, series) == 0; }))
            << live.inst->maillog_tail();
        // Waits for the gauge to show what deferred/ holds; the seconds it took.
        auto follows = [&](std::chrono::steady_clock::time_point changed) {
            const double want = static_cast<double>(compat::count_files(deferred));
            double got = -1;
            while (steady_clock::now() - changed < std::chrono::seconds(3 * queue_run_delay)) {
                if ((got = scraped(port, series)) == want) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(250));
            }
            EXPECT_EQ(got, want);
            const double took =
                std::chrono::duration<double>(steady_clock::now() - changed).count();
            std::cout << "  deferred gauge = " << got << " files after " << took << " s\n";
            return took;
        };
        make_deferred(deferred, 0, 10000);
        // A few seconds beyond the delay for the pass over 10,000 files on
        // a busy machine.
        EXPECT_LE(follows(steady_clock::now()), queue_run_delay + 5);
        for (int i = 0; i < 1000; ++i) {
            char id[16];
            std::snprintf(id, sizeof id, "%X%07X", 1 + i % 15, i);
            std::filesystem::remove(deferred + "/" + id[0] + "/" + id);
        }
        make_deferred(deferred, 20000, 10);
        EXPECT_LE(follows(steady_clock::now()), queue_run_delay + 5);
        EXPECT_EQ(scraped(port, series), 9010);
        // Born just now, the files are some seconds old at most.
        const double age = scraped(port, "cqmgr_queue_oldest_age_seconds{queue=\"deferred\"}");
        EXPECT_GE(age, 0);
        EXPECT_LT(age, 300);
        live.ok = !testing::Test::HasFailure();
    }
}

// The health endpoints of the real daemon: /healthz and /readyz answer 200
// in normal running; while the shim blocks the event loop (an open of an
// active file waits for a flag file to go), /healthz answers 503 within
// cqmgr_health_stall_time + 2 s; once the loop is let go, 200 again and the
// mail goes.
TEST(FaultLive, HealthzSeesTheLoopBlocked) {
    using std::chrono::steady_clock;
    const std::string flag = "/tmp/cqmgr-fault-block-" + std::to_string(::getpid());
    std::filesystem::remove(flag);
    std::filesystem::remove(flag + ".blocked");
    const uint16_t port = compat::allocate_ports(1)[0];
    constexpr int stall_time = 3;
    LiveCqmgr live({{"transport_maps", "inline:{ dest.example=discard: }"},
                    {"cqmgr_metrics_listen", "127.0.0.1:" + std::to_string(port)},
                    {"cqmgr_health_stall_time", std::to_string(stall_time) + "s"}},
                   {{"CQMGR_SHIM_BLOCK_FLAG", flag}});
    ASSERT_TRUE(live.wait(60, [&] { return http_status(port, "/readyz") == 200; }))
        << live.inst->maillog_tail();
    EXPECT_EQ(http_status(port, "/healthz"), 200);
    live.send({"one@dest.example"});
    ASSERT_TRUE(live.wait(60, [&] {
        return live.count({"to=<one@dest.example>", "status=sent"});
    })) << live.inst->maillog_tail();
    EXPECT_EQ(http_status(port, "/healthz"), 200);
    EXPECT_EQ(http_status(port, "/readyz"), 200);

    compat::write_file(flag, "", 0644);
    live.send({"two@dest.example"});
    ASSERT_TRUE(live.wait(60, [&] { return std::filesystem::exists(flag + ".blocked"); }));
    const auto blocked = steady_clock::now();
    int code = 0;
    while (steady_clock::now() - blocked < std::chrono::seconds(stall_time + 4)) {
        code = http_status(port, "/healthz");
        if (code == 503) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const auto seen = steady_clock::now() - blocked;
    std::cout << "  /healthz 503 after " << std::chrono::duration<double>(seen).count()
              << " s of a blocked loop\n";
    EXPECT_EQ(code, 503);
    EXPECT_LE(seen, std::chrono::seconds(stall_time + 2));
    std::filesystem::remove(flag);
    EXPECT_TRUE(live.wait(60, [&] {
        return live.count({"to=<two@dest.example>", "status=sent"});
    })) << live.inst->maillog_tail();
    EXPECT_TRUE(live.wait(10, [&] { return http_status(port, "/healthz") == 200; }));
    std::filesystem::remove(flag + ".blocked");
    live.ok = !testing::Test::HasFailure();
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
