// The /metrics endpoint: which addresses cqmgr_metrics_listen names (a
// bare port is loopback only), scrapes over real sockets (the snapshot
// taken on a loop of the test's), a busy port below 1024 waited for before
// the jail, and stop() ending the endpoint's thread while a scrape waits
// for a loop that no longer runs.
#include "metrics_endpoint.hpp"
#include "metrics_listen.hpp"
#include "process_metrics.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using asio::ip::tcp;

namespace {

// A port nobody listens on now, from the kernel (127.0.0.1:0).
uint16_t free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
        throw std::runtime_error("no free port");
    ::close(fd);
    return ntohs(sa.sin_port);
}

// A listening socket on 127.0.0.1:`port`; -1 when it cannot be had.
int hold_port(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 1) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// True when something listens on [::1] here.
bool has_ipv6_loopback() {
    int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_addr = in6addr_loopback;
    bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    ::close(fd);
    return ok;
}

// Connects to `address`:`port` (IPv4 or IPv6 text); -1 on failure.
int connect_to(const std::string& address, uint16_t port) {
    auto ep = tcp::endpoint(asio::ip::make_address(address), port);
    int fd = ::socket(ep.address().is_v6() ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, ep.data(), static_cast<socklen_t>(ep.size())) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Sends `request` and reads the reply until the server closes (at most
// 20 s); "" when the connection failed.
std::string http(const std::string& address, uint16_t port, const std::string& request) {
    int fd = connect_to(address, port);
    if (fd < 0) return "";
    (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string in;
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, 20000) == 1) {
        char buf[65536];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return in;
}

std::string get(uint16_t port, const std::string& path = "/metrics",
                const std::string& address = "127.0.0.1") {
    return http(address, port,
                "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
}

size_t thread_count() {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
        ++n;
    return n;
}

MetricsSnapshot sample() {
    MetricsSnapshot s;
    s.counters.messages_activated = 7;
    s.active_messages = 3;
    return s;
}

// A loop of the test's own, run on a thread, where snapshots are taken.
struct Loop {
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
    std::thread thread{[this] { io.run(); }};
    ~Loop() {
        work.reset();
        io.stop();
        thread.join();
    }
};

} // namespace

TEST(MetricsListen, ABarePortIsLoopbackOnly) {
    auto a = metrics_addresses("9154");
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].endpoint, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 9154));
    EXPECT_FALSE(a[0].optional);
    EXPECT_EQ(a[1].endpoint, tcp::endpoint(asio::ip::make_address("::1"), 9154));
    EXPECT_TRUE(a[1].optional);
}

TEST(MetricsListen, AnAddressWrittenOut) {
    auto a = metrics_addresses("0.0.0.0:80");
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].endpoint, tcp::endpoint(asio::ip::make_address("0.0.0.0"), 80));
    a = metrics_addresses("[::]:65535");
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].endpoint, tcp::endpoint(asio::ip::make_address("::"), 65535));
    for (const char* bad : {"", "0", "65536", "x", "1.2.3.4", "1.2.3:80", "::1:80", "[1.2.3.4]:80",
                            "[::1]:", "[::1]:0", "localhost:80", "127.0.0.1:8o", "[]:80"})
        EXPECT_TRUE(metrics_addresses(bad).empty()) << bad;
}

TEST(MetricsEndpoint, ABarePortListensOnLoopbackOnly) {
    const uint16_t port = free_port();
    MetricsEndpoint ep(std::to_string(port), 50);
    ASSERT_EQ(ep.open(), "");
    std::vector<tcp::endpoint> want{{asio::ip::make_address("127.0.0.1"), port}};
    if (has_ipv6_loopback()) want.emplace_back(asio::ip::make_address("::1"), port);
    EXPECT_EQ(ep.local_endpoints(), want);
    // Not reachable on an address of another interface, if the host has one.
    ifaddrs* ifs = nullptr;
    ASSERT_EQ(::getifaddrs(&ifs), 0);
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        auto* sin = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
        if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127) continue;
        char text[INET_ADDRSTRLEN];
        ::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text);
        int fd = connect_to(text, port);
        EXPECT_LT(fd, 0) << "reachable on " << text;
        if (fd >= 0) ::close(fd);
    }
    ::freeifaddrs(ifs);
}

TEST(MetricsEndpoint, ServesTheLoopsSnapshot) {
    const uint16_t port = free_port();
    Loop loop;
    MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50);
    ASSERT_EQ(ep.open(), "");
    ep.attach(loop.io, [] { return sample(); });
    std::string reply = get(port);
    EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
    EXPECT_NE(reply.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << reply;
    EXPECT_NE(reply.find("\ncqmgr_messages_activated_total 7\n"), std::string::npos) << reply;
    EXPECT_NE(reply.find("\ncqmgr_active_messages 3\n"), std::string::npos) << reply;
    EXPECT_EQ(get(port, "/").rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
    EXPECT_EQ(get(port, "/metrics?x=1").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
    std::string post = http("127.0.0.1", port,
                            "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                            "Connection: close\r\n\r\n");
    EXPECT_EQ(post.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << post;
    // HEAD: the length of what GET would send, and no body.
    std::string head =
        http("127.0.0.1", port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
    EXPECT_EQ(head.find("Content-Length: 0\r\n"), std::string::npos) << head;
    EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << head;
    // Two scrapes on one connection.
    std::string two = http("127.0.0.1", port,
                           "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                           "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    size_t first = two.find("HTTP/1.1 200 OK\r\n");
    ASSERT_NE(first, std::string::npos) << two;
    EXPECT_NE(two.find("HTTP/1.1 200 OK\r\n", first + 1), std::string::npos) << two;
    // A request that is not HTTP closes the connection without a reply.
    EXPECT_EQ(http("127.0.0.1", port, "\x01\x02\r\n\r\n"), "");
}

TEST(MetricsEndpoint, AServerWithoutALoopAnswersWithTheProcessOnly) {
    const uint16_t port = free_port();
    asio::io_context never_run;
    MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50);
    ASSERT_EQ(ep.open(), "");
    ep.attach(never_run, [] { return sample(); });
    // The loop never answers: after the wait the (empty) previous snapshot,
    // and what the endpoint reads itself.
    std::string reply = get(port);
    EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
    EXPECT_EQ(reply.find("cqmgr_messages_activated_total"), std::string::npos) << reply;
    EXPECT_NE(reply.find("\nprocess_cpu_seconds_total "), std::string::npos) << reply;
}

// The daemon stops the endpoint before exit(): its thread must be gone when
// stop() returns, also while a scrape waits for a loop that no longer runs.
TEST(MetricsEndpoint, StopEndsTheThreadWhileAScrapeWaits) {
    const size_t before = thread_count();
    const uint16_t port = free_port();
    asio::io_context stopped_loop;
    {
        MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50);
        ASSERT_EQ(ep.open(), "");
        ep.attach(stopped_loop, [] { return sample(); });
        EXPECT_EQ(thread_count(), before + 1);
        int fd = connect_to("127.0.0.1", port);
        ASSERT_GE(fd, 0);
        const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
        ASSERT_EQ(::send(fd, req, sizeof req - 1, MSG_NOSIGNAL), ssize_t(sizeof req - 1));
        ep.stop();
        EXPECT_EQ(thread_count(), before);
        // Nobody listens any more.
        EXPECT_LT(connect_to("127.0.0.1", port), 0);
        ::close(fd);
        ep.stop(); // again: nothing happens
    }
    EXPECT_EQ(thread_count(), before);
}

// A port below 1024 still held (by a predecessor on its way out) is waited
// for while root can open it; an unprivileged one is not (it is retried
// later, from the endpoint's thread).
TEST(MetricsEndpoint, ABusyPrivilegedPortIsWaitedForBeforeTheJail) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    int holder = -1;
    uint16_t port = 0;
    for (uint16_t p = 900; p < 1000 && holder < 0; ++p)
        if ((holder = hold_port(p)) >= 0) port = p;
    ASSERT_GE(holder, 0) << "no free port below 1024";
    {
        MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50);
        EXPECT_EQ(ep.open(), "127.0.0.1:" + std::to_string(port) + ": Address already in use");
    }
    std::thread release([holder] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::close(holder);
    });
    MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50);
    EXPECT_EQ(ep.open(std::chrono::seconds(20)), "");
    release.join();
    EXPECT_EQ(ep.local_endpoints().size(), 1u);
}

TEST(MetricsEndpoint, ABusyUnprivilegedPortIsNotWaitedFor) {
    const uint16_t port = free_port();
    int holder = hold_port(port);
    ASSERT_GE(holder, 0);
    MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ep.open(std::chrono::seconds(60)),
              "127.0.0.1:" + std::to_string(port) + ": Address already in use");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
    ::close(holder);
}

namespace {
// The status line of `reply`, e.g. "HTTP/1.1 200 OK".
std::string status_line(const std::string& reply) {
    return reply.substr(0, reply.find("\r\n"));
}
// The body of `reply`.
std::string body(const std::string& reply) {
    size_t at = reply.find("\r\n\r\n");
    return at == std::string::npos ? "" : reply.substr(at + 4);
}
} // namespace

// The fault: a handler that blocks the loop (this test's own hook; the
// daemon has none) makes /healthz answer 503 within the stall time and two
// seconds, from the endpoint's thread; once the loop turns again, 200.
TEST(MetricsEndpoint, HealthzSeesAStalledLoop) {
    const uint16_t port = free_port();
    Loop loop;
    MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50, std::chrono::seconds(1));
    ASSERT_EQ(ep.open(), "");
    ep.attach(loop.io, [] { return sample(); });
    std::string ok = get(port, "/healthz");
    EXPECT_EQ(status_line(ok), "HTTP/1.1 200 OK") << ok;
    EXPECT_EQ(body(ok).rfind("ok: the event loop turned ", 0), 0u) << ok;

    std::atomic<bool> release{false};
    asio::post(loop.io, [&release] {
        while (!release)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    });
    const auto blocked = std::chrono::steady_clock::now();
    std::string stalled;
    while (std::chrono::steady_clock::now() - blocked < std::chrono::seconds(3)) {
        stalled = get(port, "/healthz");
        if (status_line(stalled) != "HTTP/1.1 200 OK") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(status_line(stalled), "HTTP/1.1 503 Service Unavailable") << stalled;
    EXPECT_EQ(body(stalled).rfind("stalled: the event loop has not turned for ", 0), 0u) << stalled;
    EXPECT_NE(stalled.find("(cqmgr_health_stall_time = 1s)"), std::string::npos) << stalled;
    release = true;
    std::string again;
    for (int i = 0; i < 50 && status_line(again) != "HTTP/1.1 200 OK"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        again = get(port, "/healthz");
    }
    EXPECT_EQ(status_line(again), "HTTP/1.1 200 OK") << again;
}

// /readyz: 503 with what is still awaited, 200 once the loop says all is
// done (it asks on each beat); other methods are refused as for /metrics.
TEST(MetricsEndpoint, ReadyzSaysWhatItWaitsFor) {
    const uint16_t port = free_port();
    Loop loop;
    std::atomic<unsigned> bits{ready::deferred_scanned};
    MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50, std::chrono::seconds(4));
    ASSERT_EQ(ep.open(), "");
    ep.attach(loop.io, {[] { return sample(); }, [&bits] { return bits.load(); }, "9.8.7"});
    std::string waiting = get(port, "/readyz");
    EXPECT_EQ(status_line(waiting), "HTTP/1.1 503 Service Unavailable") << waiting;
    EXPECT_EQ(body(waiting), "not ready: the start-up scan of incoming is not done; "
                             "trivial-rewrite has not answered yet\n");
    bits = ready::all;
    std::string ready;
    for (int i = 0; i < 50 && status_line(ready) != "HTTP/1.1 200 OK"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ready = get(port, "/readyz");
    }
    EXPECT_EQ(status_line(ready), "HTTP/1.1 200 OK") << ready;
    EXPECT_EQ(body(ready), "ready\n");
    std::string post = http("127.0.0.1", port,
                            "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                            "Connection: close\r\n\r\n");
    EXPECT_EQ(status_line(post), "HTTP/1.1 405 Method Not Allowed") << post;
    // /metrics as before, with the loop's lag, the process and the version.
    std::string metrics = get(port);
    EXPECT_NE(metrics.find("\ncqmgr_messages_activated_total 7\n"), std::string::npos);
    EXPECT_NE(metrics.find("\ncqmgr_event_loop_lag_seconds_count "), std::string::npos);
    EXPECT_NE(metrics.find("\ncqmgr_build_info{version=\"9.8.7\"} 1\n"), std::string::npos);
    EXPECT_NE(metrics.find("\nprocess_open_fds "), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("\nprocess_resident_memory_bytes "), std::string::npos);
    EXPECT_NE(metrics.find("\nprocess_max_fds "), std::string::npos);
    EXPECT_NE(metrics.find("\nprocess_start_time_seconds "), std::string::npos);
}

// The process metrics read this process: opening descriptors shows.
TEST(ProcessMetrics, ReadTheProcess) {
    ProcessMetrics p;
    auto value = [&p](const std::string& name) {
        std::vector<prometheus::MetricFamily> out;
        p.families(out, "1.2.3");
        for (const auto& f : out)
            if (f.name == name)
                return f.type == prometheus::MetricType::Counter ? f.metric.at(0).counter.value
                                                                 : f.metric.at(0).gauge.value;
        ADD_FAILURE() << "no " << name;
        return -1.0;
    };
    const double fds = value("process_open_fds");
    EXPECT_GE(fds, 3);
    int more[10];
    for (int& fd : more)
        fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    EXPECT_EQ(value("process_open_fds"), fds + 10);
    for (int fd : more)
        ::close(fd);
    EXPECT_GT(value("process_resident_memory_bytes"), 1e6);
    EXPECT_GE(value("process_virtual_memory_bytes"), value("process_resident_memory_bytes"));
    EXPECT_GT(value("process_max_fds"), 0);
    EXPECT_GE(value("process_cpu_seconds_total"), 0);
    const double now = static_cast<double>(::time(nullptr));
    EXPECT_LE(value("process_start_time_seconds"), now + 1);
    EXPECT_GT(value("process_start_time_seconds"), now - 86400);
    EXPECT_EQ(value("cqmgr_build_info"), 1);
}
