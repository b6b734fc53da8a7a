// MX lookups with c-ares on an Asio loop, against a real DNS server
// (dnsmasq, started by the tests on a loopback port), and against a UDP
// socket that never answers.
#include "cqmgr/test/dns_server.hpp"
#include "cqmgr/test/temp_dir.hpp"
#include "dns_message.hpp"
#include "mx_resolver.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using namespace std::chrono_literals;
using test::DnsServer;
namespace dns = cqmgr::qmgr::testing;

namespace {

using Hosts = std::vector<std::string>;

// A UDP socket on loopback that takes queries and never answers.
class BlackHole {
  public:
    BlackHole() {
        fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) < 0)
            throw std::runtime_error("black hole socket");
        port_ = ntohs(a.sin_port);
    }
    ~BlackHole() { ::close(fd_); }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  private:
    int fd_ = -1;
    int port_ = 0;
};

// A DNS server that answers over UDP with the TC bit and no records, and
// over TCP with the whole reply, its length and the message, in one write.
// c-ares reads a TCP reply in two calls, the length and then the message,
// and the second piece brings the socket no new readiness (epoll in edge
// mode): the resolver's next wait must still see it.  dnsmasq writes the
// two pieces apart, so it does not show this.
class OneWriteServer {
  public:
    OneWriteServer() {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        udp_ = ::socket(AF_INET, SOCK_DGRAM, 0);
        tcp_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (udp_ < 0 || tcp_ < 0 || ::bind(udp_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 ||
            ::getsockname(udp_, reinterpret_cast<sockaddr*>(&a), &len) < 0 ||
            ::bind(tcp_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || ::listen(tcp_, 4) < 0)
            throw std::runtime_error("one-write server sockets");
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~OneWriteServer() {
        stop_ = true;
        thread_.join();
        for (int fd : {udp_, tcp_, conn_})
            if (fd >= 0) ::close(fd);
    }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    int tcp_replies() const { return tcp_replies_; }

    static constexpr const char* domain = "one.test";

  private:
    // The reply to `query` (its ID copied), with `flags`.
    static dns::Bytes answer(const dns::Bytes& query, bool truncated) {
        auto r = truncated ? dns::reply(domain, 0, {})
                           : dns::reply(domain, 0, {dns::mx(domain, 10, "mx.one.test")});
        if (query.size() < 2) return r;
        r[0] = query[0];
        r[1] = query[1];
        if (truncated) r[2] |= 0x02; // TC
        return r;
    }
    void serve() {
        while (!stop_) {
            pollfd p[3] = {{udp_, POLLIN, 0}, {tcp_, POLLIN, 0}, {conn_, POLLIN, 0}};
            if (::poll(p, conn_ >= 0 ? 3 : 2, 20) <= 0) continue;
            unsigned char buf[4096];
            if (p[0].revents & POLLIN) {
                sockaddr_in from{};
                socklen_t flen = sizeof from;
                ssize_t n =
                    ::recvfrom(udp_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
                if (n > 0) {
                    auto r = answer(dns::Bytes(buf, buf + n), true);
                    ::sendto(udp_, r.data(), r.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
                }
            }
            if ((p[1].revents & POLLIN) && conn_ < 0) conn_ = ::accept(tcp_, nullptr, nullptr);
            if (conn_ >= 0 && (p[2].revents & (POLLIN | POLLHUP))) {
                ssize_t n = ::recv(conn_, buf, sizeof buf, 0);
                if (n <= 0) {
                    ::close(conn_);
                    conn_ = -1;
                } else if (n > 2) { // the length and the query, as c-ares sends them
                    auto r = answer(dns::Bytes(buf + 2, buf + n), false);
                    dns::Bytes whole;
                    dns::put16(whole, unsigned(r.size()));
                    whole.insert(whole.end(), r.begin(), r.end());
                    // After the query's ACK and every other event of the
                    // socket: the reply is its only news.
                    std::this_thread::sleep_for(50ms);
                    ++tcp_replies_;
                    ::send(conn_, whole.data(), whole.size(), MSG_NOSIGNAL);
                }
            }
        }
    }
    int udp_ = -1, tcp_ = -1, conn_ = -1, port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> tcp_replies_{0};
    std::thread thread_;
};

// The longest label in the big set's host names (under 63).
const std::string long_label(50, 'x');

class MxResolverTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        if (!DnsServer::available()) return;
        std::vector<std::string> records{"--local=/test/",
                                         "--local-ttl=1",
                                         "--mx-host=d1.test,mx1.prov.test,10",
                                         "--mx-host=d1.test,MX2.Prov.test,20",
                                         "--mx-host=d2.test,mx.other.test,10",
                                         "--host-record=a.test,127.0.0.5"};
        // More than a UDP reply of 1232 bytes holds: c-ares asks again over TCP.
        for (int i = 0; i < 40; ++i)
            records.push_back("--mx-host=big.test,mx-" + long_label + "-" + std::to_string(i) +
                              ".prov.test," + std::to_string(i));
        server_ = new DnsServer(records);
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }
    void SetUp() override {
        if (!server_) GTEST_SKIP() << DnsServer::binary << " is not installed";
    }

    static MxResolverOptions options_for(const std::string& server) {
        MxResolverOptions o;
        o.servers = {server};
        return o;
    }
    // The black hole's, with `deadline`: c-ares would wait far longer, so
    // that the deadline ends the lookups.
    static MxResolverOptions options_for(const BlackHole& hole,
                                         std::chrono::milliseconds deadline) {
        MxResolverOptions o = options_for(hole.address());
        o.deadline = deadline;
        o.query_timeout = 10s;
        return o;
    }
    std::unique_ptr<MxResolver> make(const MxResolverOptions& o) {
        auto channel = MxChannel::open(o);
        if (!channel) throw std::runtime_error(channel.error());
        return std::make_unique<MxResolver>(io.get_executor(), std::move(*channel), o);
    }
    // Runs the loop until `done` holds, for `limit` at most.
    template <typename Done> bool run_until(Done done, std::chrono::milliseconds limit = 5s) {
        auto end = Clock::now() + limit;
        while (!done() && Clock::now() < end) {
            io.restart();
            if (io.run_for(10ms) == 0) std::this_thread::sleep_for(1ms);
        }
        return done();
    }
    // Looks `domain` up and waits for the answer.
    MxAnswer resolve(MxResolver& r, const std::string& domain) {
        std::optional<MxAnswer> got;
        r.lookup(domain, [&got](const MxAnswer& a) { got = a; });
        EXPECT_FALSE(got) << "called back from within lookup()";
        if (!run_until([&] { return got.has_value(); })) throw std::runtime_error("no answer");
        return *got;
    }

    asio::io_context io{1};
    static DnsServer* server_;
};

DnsServer* MxResolverTest::server_ = nullptr;

} // namespace

TEST_F(MxResolverTest, AnswersWithTheMxHosts) {
    auto r = make(options_for(server_->address()));
    MxAnswer a = resolve(*r, "d1.test");
    EXPECT_EQ(a.outcome, MxOutcome::answer);
    EXPECT_EQ(a.hosts, (Hosts{"mx1.prov.test", "mx2.prov.test"}));
    EXPECT_EQ(a.ttl, 1s); // --local-ttl
    EXPECT_EQ(r->stats().queries, 1u);
    EXPECT_EQ(r->stats().in_flight, 0u);
}

TEST_F(MxResolverTest, SecondLookupComesFromTheCache) {
    auto r = make(options_for(server_->address()));
    EXPECT_EQ(resolve(*r, "d2.test").hosts, Hosts{"mx.other.test"});
    // Any case, a trailing dot: the same domain.
    EXPECT_EQ(resolve(*r, "D2.Test.").hosts, Hosts{"mx.other.test"});
    ASSERT_NE(r->cached("d2.test"), nullptr);
    EXPECT_EQ(r->cached("d2.test")->hosts, Hosts{"mx.other.test"});
    EXPECT_EQ(r->stats().queries, 1u);
    EXPECT_EQ(r->stats().cache_hits, 1u);
    EXPECT_EQ(r->stats().cached, 1u);
}

TEST_F(MxResolverTest, AnAnswerExpiresWithItsTtl) {
    MxResolverOptions o = options_for(server_->address());
    o.min_ttl = 0s; // keep the reply's 1 s
    auto r = make(o);
    EXPECT_EQ(resolve(*r, "d1.test").outcome, MxOutcome::answer);
    EXPECT_EQ(resolve(*r, "d1.test").outcome, MxOutcome::answer);
    EXPECT_EQ(r->stats().queries, 1u);
    std::this_thread::sleep_for(1100ms);
    EXPECT_EQ(r->cached("d1.test"), nullptr);
    EXPECT_EQ(resolve(*r, "d1.test").outcome, MxOutcome::answer);
    EXPECT_EQ(r->stats().queries, 2u);
}

TEST_F(MxResolverTest, NxdomainAndNoMxAreKeptToo) {
    auto r = make(options_for(server_->address()));
    MxAnswer a = resolve(*r, "nope.test");
    EXPECT_EQ(a.outcome, MxOutcome::nxdomain);
    EXPECT_TRUE(a.hosts.empty());
    MxAnswer b = resolve(*r, "a.test");
    EXPECT_EQ(b.outcome, MxOutcome::no_mx);
    EXPECT_EQ(b.hosts, Hosts{"a.test"});
    EXPECT_EQ(resolve(*r, "nope.test").outcome, MxOutcome::nxdomain);
    EXPECT_EQ(resolve(*r, "a.test").outcome, MxOutcome::no_mx);
    EXPECT_EQ(r->stats().queries, 2u);
    EXPECT_EQ(r->stats().outcomes[size_t(MxOutcome::nxdomain)], 2u);
}

TEST_F(MxResolverTest, ALongAnswerComesOverTcp) {
    auto r = make(options_for(server_->address()));
    MxAnswer a = resolve(*r, "big.test");
    ASSERT_EQ(a.outcome, MxOutcome::answer);
    ASSERT_EQ(a.hosts.size(), 40u);
    EXPECT_EQ(a.hosts[0], "mx-" + long_label + "-0.prov.test"); // by preference
    EXPECT_EQ(a.hosts[39], "mx-" + long_label + "-39.prov.test");
}

TEST_F(MxResolverTest, AReplyInOneTcpWriteIsReadWhole) {
    OneWriteServer server;
    MxResolverOptions o = options_for(server.address());
    o.query_timeout = 10s; // a stalled read would end by the deadline
    auto r = make(o);
    MxAnswer a = resolve(*r, OneWriteServer::domain);
    EXPECT_EQ(a.outcome, MxOutcome::answer);
    EXPECT_EQ(a.hosts, Hosts{"mx.one.test"});
    EXPECT_EQ(server.tcp_replies(), 1);
    EXPECT_EQ(r->stats().deadlines, 0u);
}

TEST_F(MxResolverTest, NotAHostNameIsNotAsked) {
    auto r = make(options_for(server_->address()));
    EXPECT_EQ(resolve(*r, "a b.test").outcome, MxOutcome::server_failure);
    EXPECT_EQ(resolve(*r, "[d1.test]").outcome, MxOutcome::server_failure);
    EXPECT_EQ(r->stats().queries, 0u);
}

TEST_F(MxResolverTest, ABlackHoleEndsAtTheDeadlineAndNothingElseWaits) {
    BlackHole hole;
    auto slow = make(options_for(hole, 300ms));
    auto fast = make(options_for(server_->address()));
    std::optional<MxAnswer> late, quick;
    Clock::time_point asked = Clock::now(), late_at{}, quick_at{};
    slow->lookup("d1.test", [&](const MxAnswer& a) {
        late = a;
        late_at = Clock::now();
    });
    EXPECT_LT(Clock::now() - asked, 100ms); // lookup() returns at once
    fast->lookup("d1.test", [&](const MxAnswer& a) {
        quick = a;
        quick_at = Clock::now();
    });
    // A timer of the loop keeps its time meanwhile.
    asio::steady_timer tick(io, 100ms);
    Clock::time_point ticked{};
    tick.async_wait([&](error_code) { ticked = Clock::now(); });
    ASSERT_TRUE(run_until([&] { return late && quick; }));
    EXPECT_EQ(quick->outcome, MxOutcome::answer);
    EXPECT_EQ(late->outcome, MxOutcome::timeout);
    EXPECT_LT(quick_at, late_at);
    EXPECT_LT(ticked, late_at);
    EXPECT_GE(late_at - asked, 290ms);
    EXPECT_LT(late_at - asked, 3s);
    EXPECT_EQ(slow->stats().deadlines, 1u);
    // The timeout is kept for failure_ttl: no second query meanwhile.
    EXPECT_EQ(resolve(*slow, "d1.test").outcome, MxOutcome::timeout);
    EXPECT_EQ(slow->stats().queries, 1u);
}

TEST_F(MxResolverTest, LookupsInFlightAreBounded) {
    BlackHole hole;
    MxResolverOptions o = options_for(hole, 400ms);
    o.max_in_flight = 2;
    o.max_queued = 1;
    auto r = make(o);
    std::map<std::string, std::vector<MxOutcome>> got;
    auto note = [&got](std::string d) {
        return [&got, d](const MxAnswer& a) { got[d].push_back(a.outcome); };
    };
    for (const char* d : {"a.test", "b.test", "c.test", "d.test", "a.test"})
        r->lookup(d, note(d));
    EXPECT_EQ(r->stats().in_flight, 2u); // a, b
    EXPECT_EQ(r->stats().queued, 1u);    // c
    EXPECT_EQ(r->stats().busy, 1u);      // d
    EXPECT_EQ(r->stats().joined, 1u);    // a again
    // The refusal comes at once, the rest by the deadline.
    ASSERT_TRUE(run_until([&] { return got.count("d.test") > 0; }, 200ms));
    EXPECT_EQ(got["d.test"], std::vector{MxOutcome::busy});
    EXPECT_EQ(got.size(), 1u);
    ASSERT_TRUE(run_until([&] { return got.size() == 4; }));
    EXPECT_EQ(got["a.test"], (std::vector{MxOutcome::timeout, MxOutcome::timeout}));
    EXPECT_EQ(got["b.test"], std::vector{MxOutcome::timeout});
    EXPECT_EQ(got["c.test"], std::vector{MxOutcome::timeout});
    // c timed out in the queue: it was never sent.
    EXPECT_EQ(r->stats().queries, 2u);
    EXPECT_EQ(r->stats().queued, 0u);
    EXPECT_EQ(r->stats().deadlines, 3u);
}

TEST_F(MxResolverTest, DestroyedWithLookupsPending) {
    BlackHole hole;
    auto r = make(options_for(hole, 5s));
    bool called = false;
    r->lookup("d1.test", [&called](const MxAnswer&) { called = true; });
    io.restart();
    io.run_for(50ms);
    r.reset();
    io.restart();
    io.run_for(50ms);
    EXPECT_FALSE(called);
}

TEST_F(MxResolverTest, ServersComeFromResolvConfOrTheParameter) {
    test::TempDir tmp("cqmgr-mx");
    MxResolverOptions o;
    o.resolv_conf = tmp.write("resolv.conf", "nameserver 192.0.2.53\n");
    auto channel = MxChannel::open(o);
    ASSERT_TRUE(channel.ok()) << channel.error();
    EXPECT_EQ(channel->servers(), Hosts{"192.0.2.53:53"});
    o.servers = {"127.0.0.1:5353", "[::1]:53"};
    channel = MxChannel::open(o);
    ASSERT_TRUE(channel.ok()) << channel.error();
    EXPECT_EQ(channel->servers(), (Hosts{"127.0.0.1:5353", "[::1]:53"}));
    o.servers = {"mx.example"};
    EXPECT_FALSE(MxChannel::open(o).ok());
}

// The daemon's way: the channel opened before the jail (as root), the
// lookups made after chroot into an empty directory and setuid.
TEST_F(MxResolverTest, WorksInTheJail) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (chroot)";
    test::TempDir jail("cqmgr-mx-jail");
    MxResolverOptions o = options_for(server_->address());
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        auto channel = MxChannel::open(o);
        if (!channel) ::_exit(10);
        if (::chroot(jail.str().c_str()) < 0 || ::chdir("/") < 0) ::_exit(11);
        if (::setgid(65534) < 0 || ::setuid(65534) < 0) ::_exit(12);
        if (::access("/etc/resolv.conf", F_OK) == 0) ::_exit(13);
        asio::io_context jailed{1};
        MxResolver r(jailed.get_executor(), std::move(*channel), o);
        std::optional<MxAnswer> got;
        r.lookup("d1.test", [&got](const MxAnswer& a) { got = a; });
        auto end = Clock::now() + 5s;
        while (!got && Clock::now() < end) {
            jailed.restart();
            jailed.run_for(10ms);
        }
        if (!got) ::_exit(14);
        ::_exit(got->hosts == Hosts{"mx1.prov.test", "mx2.prov.test"} ? 0 : 15);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}
