// The asynchronous client against a real redis-server: commands, a server
// killed or stopped in the middle of a command, and a restart.
#include "cqmgr/cluster/redis_address.hpp"
#include "redis_fixture.hpp"

#include <algorithm>

using namespace cqmgr;
using namespace cqmgr::cluster;
using namespace cqmgr::cluster::testing;
using namespace std::chrono_literals;

namespace {

class RedisClientTest : public RedisFixture {};

// Counts loop turns while a test waits, to show the loop was never held.
struct Ticker {
    explicit Ticker(asio::io_context& io) : timer(io) { tick(); }
    void tick() {
        timer.expires_after(5ms);
        timer.async_wait([this](error_code ec) {
            if (ec) return;
            ticks++;
            tick();
        });
    }
    asio::steady_timer timer;
    int ticks = 0;
};

} // namespace

TEST_F(RedisClientTest, CommandsOverUnixSocketAndLoopback) {
    for (auto how : {RedisServer::Listen::unix_socket, RedisServer::Listen::loopback}) {
        RedisServer server(how);
        server.start();
        auto c = make_client(server.address());
        c->start();
        ASSERT_TRUE(run_until([&] { return c->up(); })) << server.address();
        EXPECT_EQ(describe(call(*c, {"SET", "k", std::string("v\0w", 3)})), "OK");
        RedisReply got = call(*c, {"GET", "k"});
        EXPECT_EQ(got.type, RedisReply::Type::string);
        EXPECT_EQ(got.str, std::string("v\0w", 3));
        EXPECT_EQ(call(*c, {"INCRBY", "n", "41"}).integer, 41);
        EXPECT_EQ(call(*c, {"GET", "missing"}).type, RedisReply::Type::nil);
        EXPECT_EQ(call(*c, {"RPUSH", "l", "a", "b"}).integer, 2);
        EXPECT_EQ(describe(call(*c, {"LRANGE", "l", "0", "-1"})), "[a, b]");
        EXPECT_EQ(call(*c, {"NOSUCHCOMMAND"}).type, RedisReply::Type::error);
        EXPECT_EQ(infos,
                  std::vector<std::string>{"redis server " + server.address() + ": connected"});
        EXPECT_TRUE(warnings.empty());
        c->close();
        infos.clear();
    }
}

TEST_F(RedisClientTest, ManyCommandsInFlightAnswerInOrder) {
    RedisServer server;
    server.start();
    auto c = make_client(server.address());
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    std::vector<int64_t> got;
    for (int i = 0; i < 1000; i++)
        c->command({"INCR", "n"}, [&](const RedisReply& r) { got.push_back(r.integer); });
    ASSERT_TRUE(run_until([&] { return got.size() == 1000; }));
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(got[i], i + 1);
}

TEST_F(RedisClientTest, KilledMidCommandFailsWithinTheDeadline) {
    RedisServer server;
    server.start();
    auto c = make_client(server.address(), 3000ms);
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    Ticker ticker(io);
    std::optional<RedisReply> got;
    auto sent = Clock::now();
    c->command({"BLPOP", "never", "0"}, [&](const RedisReply& r) { got = r; });
    run_for(50ms); // the server has it and blocks on it
    ASSERT_FALSE(got);
    server.kill();
    ASSERT_TRUE(run_until([&] { return got.has_value(); }));
    auto took = Clock::now() - sent;
    EXPECT_TRUE(got->failed()) << describe(*got);
    EXPECT_LT(took, 3000ms);
    EXPECT_GT(ticker.ticks, 0);
    EXPECT_FALSE(c->up());
    // Down: commands fail at once, and the outage is warned about once
    // however often the reconnection fails.
    EXPECT_EQ(describe(call(*c, {"PING"})), "failed: not connected");
    run_for(500ms);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_TRUE(warnings[0].starts_with("redis server " + server.address() + ": "));
    EXPECT_TRUE(warnings[0].ends_with("; using local limits")) << warnings[0];
    EXPECT_EQ(states, (std::vector<bool>{true, false}));
}

TEST_F(RedisClientTest, StoppedServerTimesOutThenComesBack) {
    RedisServer server;
    server.start();
    auto c = make_client(server.address(), 100ms);
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    server.pause();
    Ticker ticker(io);
    std::optional<RedisReply> got;
    auto sent = Clock::now();
    c->command({"PING"}, [&](const RedisReply& r) { got = r; });
    ASSERT_TRUE(run_until([&] { return got.has_value(); }));
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - sent);
    EXPECT_EQ(describe(*got), "failed: no reply within 100 ms");
    EXPECT_GE(took, 100ms);
    EXPECT_GT(ticker.ticks, 0);
    std::cerr << "PING to a stopped server failed after " << took.count() << " ms\n";
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0],
              "redis server " + server.address() + ": no reply within 100 ms; using local limits");
    // Reconnections meanwhile reach the stopped server's socket, but no
    // PING comes back: still down, and no more lines.
    run_for(2500ms);
    EXPECT_FALSE(c->up());
    EXPECT_EQ(warnings.size(), 1u);
    EXPECT_EQ(infos.size(), 1u); // "connected", at the start
    server.resume();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    EXPECT_EQ(describe(call(*c, {"PING"})), "PONG");
    EXPECT_EQ(infos.size(), 2u);
    EXPECT_EQ(infos.back(),
              "redis server " + server.address() + ": connection restored; using shared limits");
    ASSERT_TRUE(run_until([&] { return states.size() == 3; }));
    EXPECT_EQ(states, (std::vector<bool>{true, false, true}));
}

TEST_F(RedisClientTest, RestartReconnects) {
    RedisServer server(RedisServer::Listen::loopback);
    server.start();
    auto c = make_client(server.address());
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    EXPECT_EQ(describe(call(*c, {"SET", "k", "1"})), "OK");
    for (int round = 0; round < 2; round++) {
        server.kill();
        ASSERT_TRUE(run_until([&] { return !c->up(); }));
        run_for(300ms);
        server.start();
        ASSERT_TRUE(run_until([&] { return c->up(); }));
        // No persistence: the restarted server is empty.
        EXPECT_EQ(call(*c, {"GET", "k"}).type, RedisReply::Type::nil);
        EXPECT_EQ(describe(call(*c, {"SET", "k", "1"})), "OK");
    }
    EXPECT_EQ(warnings.size(), 2u);
    EXPECT_EQ(c->stats().outages, 2);
    ASSERT_TRUE(run_until([&] { return states.size() == 5; }));
    EXPECT_EQ(states, (std::vector<bool>{true, false, true, false, true}));
}

TEST_F(RedisClientTest, AbsentAtStartThenThere) {
    RedisServer server;
    auto c = make_client(server.address());
    c->start();
    run_for(300ms);
    EXPECT_FALSE(c->up());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(describe(call(*c, {"PING"})), "failed: not connected");
    server.start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    EXPECT_EQ(describe(call(*c, {"PING"})), "PONG");
    EXPECT_EQ(warnings.size(), 1u);
}

TEST_F(RedisClientTest, RoundTripTime) {
    // A measurement for docs, not an assertion: the time of one command
    // through the loop and back.
    RedisServer server;
    server.start();
    auto c = make_client(server.address());
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    const int n = 2000;
    int done = 0;
    auto start = Clock::now();
    std::function<void(const RedisReply&)> next = [&](const RedisReply&) {
        if (++done < n) c->command({"PING"}, next);
    };
    c->command({"PING"}, next);
    ASSERT_TRUE(run_until([&] { return done == n; }));
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    std::cerr << "PING round trip over a unix socket: " << us / n << " us\n";
}

TEST_F(RedisClientTest, EachServerHasItsOwnInstance) {
    // A restart (or another server) is another run_id: what the lease
    // scripts tell a store that may have lost leases by.
    RedisServer server;
    server.start();
    auto c = make_client(server.address());
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    std::string first = c->instance();
    EXPECT_EQ(first.size(), 40u);
    EXPECT_EQ(c->connection(), 1u);
    server.kill();
    ASSERT_TRUE(run_until([&] { return !c->up(); }));
    server.start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    EXPECT_NE(c->instance(), first);
    EXPECT_EQ(c->connection(), 2u);
}

TEST_F(RedisClientTest, AReplicaIsNotUp) {
    // Every lease step writes: a replica would refuse them all.
    RedisServer master(RedisServer::Listen::loopback), replica(RedisServer::Listen::loopback);
    master.start();
    replica.start({"--replicaof", "127.0.0.1", std::to_string(master.port())});
    auto c = make_client(replica.address());
    c->start();
    ASSERT_TRUE(run_until([&] { return !warnings.empty(); }));
    EXPECT_FALSE(c->up());
    EXPECT_EQ(warnings[0],
              "redis server " + replica.address() + ": not a master (slave); using local limits");
}

TEST_F(RedisClientTest, AMasterTurnedReplicaIsLeft) {
    // Sentinel makes an old master a replica of the new one; a write it
    // refuses (READONLY) ends the connection, and the next one finds no
    // master there.
    RedisServer a(RedisServer::Listen::loopback), b(RedisServer::Listen::loopback);
    a.start();
    b.start();
    auto c = make_client(a.address());
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    EXPECT_EQ(describe(a.ask({"REPLICAOF", "127.0.0.1", std::to_string(b.port())})), "OK");
    RedisReply r = call(*c, {"SET", "k", "v"});
    EXPECT_EQ(r.type, RedisReply::Type::error);
    EXPECT_TRUE(r.str.starts_with("READONLY")) << describe(r);
    ASSERT_TRUE(run_until([&] { return !c->up(); }));
    ASSERT_FALSE(warnings.empty());
    EXPECT_TRUE(warnings[0].find("no longer a master") != std::string::npos) << warnings[0];
    run_for(300ms);
    EXPECT_FALSE(c->up());
}

namespace {

class SentinelTest : public RedisFixture {
  protected:
    std::shared_ptr<RedisClient> sentinel_client(const std::vector<std::string>& sentinels) {
        RedisOptions o;
        o.master_name = "cqmgr";
        for (const auto& s : sentinels)
            o.sentinels.push_back(*parse_redis_address(s, 26379));
        o.command_timeout = 200ms;
        o.connect_timeout = 500ms;
        o.backoff_min = 20ms;
        o.backoff_max = 200ms;
        return RedisClient::create(
            io.get_executor(), o,
            [this](bool warning, const std::string& line) {
                (warning ? warnings : infos).push_back(line);
            },
            [this](bool up) { states.push_back(up); });
    }
    // Waits until the sentinel knows `n` replicas of the master (it asks
    // the master with INFO about once a second at first).
    bool replicas_known(RedisServer& sentinel, size_t n) {
        return run_until(
            [&] {
                RedisReply r = sentinel.ask({"SENTINEL", "replicas", "cqmgr"});
                return r.type == RedisReply::Type::array && r.elements.size() >= n;
            },
            20s);
    }
};

} // namespace

TEST_F(SentinelTest, TheSentinelsNameTheMaster) {
    RedisServer master(RedisServer::Listen::loopback), sentinel(RedisServer::Listen::loopback);
    RedisServer nobody(RedisServer::Listen::loopback); // never started
    master.start();
    sentinel.start_sentinel("cqmgr", master.address());
    // The first sentinel listed is not there: the next one is asked.
    auto c = sentinel_client({nobody.address(), sentinel.address()});
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    EXPECT_EQ(c->server().text(), master.address());
    EXPECT_EQ(describe(call(*c, {"SET", "k", "v"})), "OK");
    EXPECT_EQ(infos,
              std::vector<std::string>{"redis master cqmgr (" + master.address() + "): connected"});
}

TEST_F(SentinelTest, AFailoverIsFollowed) {
    RedisServer master(RedisServer::Listen::loopback), replica(RedisServer::Listen::loopback),
        sentinel(RedisServer::Listen::loopback);
    master.start();
    replica.start({"--replicaof", "127.0.0.1", std::to_string(master.port())});
    sentinel.start_sentinel("cqmgr", master.address());
    auto c = sentinel_client({sentinel.address()});
    c->start();
    ASSERT_TRUE(run_until([&] { return c->up(); }));
    std::string first = c->instance();
    ASSERT_TRUE(replicas_known(sentinel, 1));
    // The master dies; Sentinel promotes the replica.
    master.kill();
    ASSERT_TRUE(run_until([&] { return !c->up(); }));
    ASSERT_TRUE(run_until([&] { return c->up(); }, 30s));
    EXPECT_EQ(c->server().text(), replica.address());
    EXPECT_NE(c->instance(), first);
    EXPECT_EQ(describe(call(*c, {"SET", "k", "v"})), "OK");
    EXPECT_NE(std::find(infos.begin(), infos.end(),
                        "redis master cqmgr: now at " + replica.address() + " (was " +
                            master.address() + ")"),
              infos.end());
}
