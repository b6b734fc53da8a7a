// The /metrics endpoint: which addresses cqmgr_metrics_listen names (a
// bare port is loopback only), scrapes over real sockets (the snapshot
// taken on a loop of the test's), a busy port below 1024 waited for before
// the jail, and stop() ending the endpoint's thread while a scrape waits
// for a loop that no longer runs.
#include "metrics_endpoint.hpp"
#include "metrics_listen.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <cstring>
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

TEST(MetricsEndpoint, AServerWithoutALoopAnswersEmpty) {
    const uint16_t port = free_port();
    MetricsEndpoint ep("127.0.0.1:" + std::to_string(port), 50);
    ASSERT_EQ(ep.open(), "");
    asio::io_context never_run;
    ep.attach(never_run, [] { return sample(); });
    // The loop never answers: after the wait the (empty) previous snapshot.
    std::string reply = get(port);
    EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
    EXPECT_NE(reply.find("Content-Length: 0\r\n"), std::string::npos) << reply;
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
