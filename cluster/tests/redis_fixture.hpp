// What the tests against a real redis-server share: the server, a loop
// that always has work (so run_for waits), and a client that records its
// log lines and state changes.
#pragma once

#include "cqmgr/cluster/redis_client.hpp"
#include "redis_server.hpp"

#include <csignal>
#include <functional>
#include <gtest/gtest.h>
#include <optional>

namespace cqmgr::cluster::testing {

class RedisFixture : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!RedisServer::available()) GTEST_SKIP() << "redis-server is not installed";
        // As in the daemon (see redis_client.hpp).
        ::signal(SIGPIPE, SIG_IGN);
    }

    // Runs the loop until `done()` or `limit` passed; returns done().
    bool run_until(const std::function<bool()>& done,
                   std::chrono::milliseconds limit = std::chrono::seconds(20)) {
        auto end = std::chrono::steady_clock::now() + limit;
        while (!done() && std::chrono::steady_clock::now() < end)
            io.run_for(std::chrono::milliseconds(5));
        return done();
    }
    // Runs the loop for `d`.
    void run_for(std::chrono::milliseconds d) {
        auto end = std::chrono::steady_clock::now() + d;
        while (std::chrono::steady_clock::now() < end)
            io.run_for(std::chrono::milliseconds(5));
    }

    std::shared_ptr<RedisClient>
    make_client(const std::string& address,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(200)) {
        RedisOptions o;
        o.address = *parse_redis_address(address);
        o.command_timeout = timeout;
        o.backoff_min = std::chrono::milliseconds(20);
        o.backoff_max = std::chrono::milliseconds(200);
        return RedisClient::create(
            io.get_executor(), o,
            [this](bool warning, const std::string& line) {
                (warning ? warnings : infos).push_back(line);
            },
            [this](bool up) { states.push_back(up); });
    }

    // Sends one command and waits for its reply.
    RedisReply call(RedisClient& c, std::vector<std::string> args) {
        std::optional<RedisReply> got;
        c.command(std::move(args), [&](const RedisReply& r) { got = r; });
        EXPECT_TRUE(run_until([&] { return got.has_value(); }));
        return got.value_or(RedisReply::failure("no callback"));
    }

    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
    std::vector<std::string> warnings, infos;
    std::vector<bool> states;
};

} // namespace cqmgr::cluster::testing
