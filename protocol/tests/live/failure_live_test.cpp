// Failures, live: a real agent killed in the middle of a request, and agents
// of our own on private/<name> that answer garbage.  Each must become a
// deferral outcome with the stock hop status, and the next delivery through
// the same client code must work.
#include "../fake_server.hpp"
#include "cqmgr/test/delivery_client.hpp"
#include "live_env.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <gtest/gtest.h>
#include <signal.h>
#include <sstream>
#include <thread>

using namespace cqmgr::protocol;
using namespace std::string_literals;
using live::run;
using live::awaitable;
namespace asio = boost::asio;
using Kind = DeliveryOutcome::Kind;

namespace {

DeliveryTimeouts timeouts() {
    using namespace std::chrono_literals;
    return DeliveryTimeouts::from_settings(10s, 20s);
}

// Reads a /proc file; "" when the process is gone or the file unreadable.
std::string proc_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return in.is_open() ? ss.str() : std::string();
}

// Pids of this instance's processes whose command line contains `word`.
std::vector<pid_t> instance_processes(const std::string& word) {
    std::vector<pid_t> out;
    std::string env_entry = "MAIL_CONFIG=" + live::env().conf_dir;
    DIR* d = ::opendir("/proc");
    if (!d) return out;
    while (struct dirent* e = ::readdir(d)) {
        char* end = nullptr;
        long pid = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || pid <= 0) continue;
        std::string base = std::string("/proc/") + e->d_name;
        std::string cmd = proc_file(base + "/cmdline"), envs = proc_file(base + "/environ");
        for (auto& c : cmd)
            if (c == '\0') c = ' ';
        if (cmd.find(word) == std::string::npos) continue;
        if (envs.find(env_entry + '\0') == std::string::npos &&
            !envs.ends_with(env_entry))
            continue;
        out.push_back(static_cast<pid_t>(pid));
    }
    ::closedir(d);
    return out;
}

// The socket inode of an established TCP connection to 127.0.0.1:port, or "".
std::string connection_to(std::uint16_t port) {
    std::ifstream in("/proc/net/tcp");
    std::string line;
    char want[16];
    std::snprintf(want, sizeof want, ":%04X", port);
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string slot, local, remote, state, queues, timer, retr, uid, timeout, inode;
        ls >> slot >> local >> remote >> state >> queues >> timer >> retr >> uid >> timeout >> inode;
        if (state == "01" && remote.ends_with(want)) return inode;
    }
    return "";
}

// True when process `pid` holds the socket with inode `inode`.
bool holds_socket(pid_t pid, const std::string& inode) {
    std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return false;
    bool found = false;
    while (struct dirent* e = ::readdir(d)) {
        char target[256];
        ssize_t n = ::readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
        if (n > 0 && std::string(target, n) == "socket:[" + inode + "]") found = true;
    }
    ::closedir(d);
    return found;
}

// Waits (on the event loop) until a slowsmtp agent is connected to the slow
// sink and sits in DATA, then kills that agent (only it) with SIGKILL.
// Returns the pids killed.
awaitable<std::vector<pid_t>> kill_agent_in_data() {
    auto ex = co_await asio::this_coro::executor;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    std::string inode;
    while ((inode = connection_to(live::env().ports.slow)).empty() &&
           std::chrono::steady_clock::now() < deadline) {
        asio::steady_timer t(ex, std::chrono::milliseconds(20));
        co_await t.async_wait(asio::use_awaitable);
    }
    // Give the agent time to get through MAIL/RCPT to DATA.
    asio::steady_timer t(ex, std::chrono::milliseconds(500));
    co_await t.async_wait(asio::use_awaitable);
    std::vector<pid_t> killed;
    for (pid_t p : instance_processes("-n slowsmtp")) {
        if (inode.empty() || !holds_socket(p, inode)) continue;
        if (::kill(p, SIGKILL) == 0) killed.push_back(p);
    }
    co_return killed;
}

} // namespace

TEST(LiveFailure, AgentKilledMidRequest) {
    std::string id = live::submit_active("alice@example.org", {"k@dest.example"}, "kill me");
    std::string fast = "[127.0.0.1]:" + std::to_string(live::env().ports.sink);
    std::string slow = "[127.0.0.1]:" + std::to_string(live::env().ports.slow);
    // One request, reused: the agents mark the recipient done, which only
    // matters to a queue manager.
    auto to_fast = live::request_for(id, fast);
    auto to_slow = to_fast;
    to_slow.nexthop = slow;
    // A first, good delivery: the agent has then completed a request, so
    // master does not throttle the service when it dies later.
    auto first = run(deliver_once("private/slowsmtp", to_fast, timeouts()));
    ASSERT_EQ(first.kind, Kind::replied) << first.warning;
    ASSERT_EQ(first.reply.status, 0);
    // Let the agent report itself available again, so that it (and not a
    // fresh process) takes the next request.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));

    struct Both {
        DeliveryOutcome outcome;
        std::vector<pid_t> killed;
    };
    auto both = run([to_slow]() -> awaitable<Both> {
        auto ex = co_await asio::this_coro::executor;
        std::vector<pid_t> killed;
        asio::co_spawn(ex, kill_agent_in_data(), [&killed](std::exception_ptr e, std::vector<pid_t> p) {
            if (e) ADD_FAILURE() << "the killer coroutine failed";
            killed = std::move(p);
        });
        auto o = co_await deliver_once("private/slowsmtp", to_slow, timeouts());
        co_return Both{o, killed};
    }());
    EXPECT_EQ(both.killed.size(), 1u) << "expected one slowsmtp agent in DATA to kill";
    EXPECT_EQ(both.outcome.kind, Kind::crashed) << both.outcome.warning;
    EXPECT_EQ(both.outcome.reply.hop.status, "4.3.0");
    EXPECT_EQ(both.outcome.reply.hop.reason, "unknown mail transport error");
    EXPECT_EQ(both.outcome.warning, "private/slowsmtp socket: malformed response");
    EXPECT_TRUE(both.outcome.deferred());

    // The transport and the client code still work: an idle or new agent
    // takes the next request (service_throttle_time is 1 s in this instance,
    // in case master throttled the service after the kill).
    auto again = run(deliver_once("private/slowsmtp", to_fast, timeouts()));
    EXPECT_EQ(again.kind, Kind::replied) << again.warning;
    EXPECT_EQ(again.reply.status, 0);
}

TEST(LiveFailure, GarbageAgentsBecomeDeferrals) {
    // Our own agents, bound on private/<name> in the instance's queue
    // directory; after each, a real agent still delivers.
    const std::string hello = "protocol\0delivery_request_protocol\0\0"s;
    struct Case {
        std::string name;
        std::function<awaitable<void>(fake::Socket&)> script;
        Kind kind;
        std::string warning;
    };
    auto after_request = [hello](std::string reply) {
        return [hello, reply](fake::Socket& s) -> awaitable<void> {
            co_await fake::send(s, hello);
            fake::ListReader r;
            AttrList head, rcpt;
            co_await r.read(s, head);
            co_await r.read(s, rcpt);
            co_await fake::send(s, reply);
            s.close();
        };
    };
    const std::vector<Case> cases = {
        {"garbage-text", after_request("500 what?\r\n"), Kind::crashed,
         "private/garbage-text socket: malformed response"},
        {"garbage-list", after_request("status\0" "0\0\0"s), Kind::crashed,
         "private/garbage-list socket: malformed response"},
        {"garbage-hello",
         [](fake::Socket& s) -> awaitable<void> {
             co_await fake::send(s, "protocol\0smtp\0\0"s);
             fake::ListReader r;
             AttrList none;
             co_await r.read(s, none);
         },
         Kind::unavailable,
         "private/garbage-hello socket: malformed response"},
        {"silent-close",
         [](fake::Socket& s) -> awaitable<void> {
             s.close();
             co_return;
         },
         Kind::unavailable, "write to process (silent-close): Broken pipe"},
    };
    std::string id = live::submit_active("alice@example.org", {"z@disc.example"}, "garbage");
    const auto req = live::request_for(id, "test discard");
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        asio::io_context io;
        fake::Server agent(io, "private/" + c.name,
                           [&c](fake::Socket& s, int) -> awaitable<void> { co_await c.script(s); });
        auto o = fake::run(io, deliver_once("private/" + c.name, req, timeouts()));
        EXPECT_EQ(o.kind, c.kind) << o.warning;
        EXPECT_EQ(o.warning, c.warning);
        EXPECT_TRUE(o.deferred());
        EXPECT_EQ(o.reply.hop.status, "4.3.0");
        // Same io_context, same client code: the real discard agent works.
        auto good = fake::run(io, deliver_once("private/discard", req, timeouts()));
        EXPECT_EQ(good.kind, Kind::replied) << good.warning;
        EXPECT_EQ(good.reply.status, 0);
        EXPECT_EQ(::unlink(("private/" + c.name).c_str()), 0) << std::strerror(errno);
    }
}

TEST(LiveFailure, UnknownTransportIsUnavailable) {
    std::string id = live::submit_active("alice@example.org", {"y@disc.example"}, "no transport");
    auto o = run(deliver_once("private/nosuchtransport", live::request_for(id, "x"), timeouts()));
    EXPECT_EQ(o.kind, Kind::unavailable);
    EXPECT_EQ(o.reply.hop.reason, "mail transport unavailable");
    EXPECT_EQ(o.warning, "connect to transport private/nosuchtransport: No such file or directory");
}
