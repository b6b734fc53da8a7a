// The asynchronous client against a real redis-server: commands, a server
// killed or stopped in the middle of a command, and a restart.
#include "redis_fixture.hpp"

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
