// In-process stand-ins for Postfix services in the client unit tests: a UNIX
// socket server that runs a scripted coroutine for every connection, and a
// helper to run a client coroutine to completion with a time bound.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/attr.hpp"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace fake {

using cqmgr::awaitable;
namespace asio = boost::asio;
using Socket = asio::local::stream_protocol::socket;

// Writes all of `bytes`; returns false when the peer is gone.
inline awaitable<bool> send(Socket& s, std::string bytes) {
    boost::system::error_code ec;
    co_await asio::async_write(s, asio::buffer(bytes), asio::redirect_error(asio::use_awaitable, ec));
    co_return !ec;
}

// Reads one null-format list; false on EOF or a malformed list.
class ListReader {
  public:
    awaitable<bool> read(Socket& s, cqmgr::protocol::AttrList& out) {
        char buf[4096];
        for (;;) {
            if (!pending_.empty()) {
                std::string_view in(pending_);
                auto st = parser_.parse(in, out);
                pending_.erase(0, pending_.size() - in.size());
                if (st == cqmgr::protocol::AttrParser::Status::list) co_return true;
                if (st == cqmgr::protocol::AttrParser::Status::error) co_return false;
            }
            boost::system::error_code ec;
            size_t n = co_await s.async_read_some(asio::buffer(buf),
                                                  asio::redirect_error(asio::use_awaitable, ec));
            if (ec) co_return false;
            pending_.append(buf, n);
        }
    }

  private:
    cqmgr::protocol::AttrParser parser_;
    std::string pending_;
};

// Accepts connections on `path` forever and runs `script` for each one.
class Server {
  public:
    using Script = std::function<awaitable<void>(Socket&, int index)>;

    Server(asio::io_context& io, const std::string& path, Script script)
        : acceptor_(io, asio::local::stream_protocol::endpoint(path)), script_(std::move(script)) {
        asio::co_spawn(io, accept_loop(), asio::detached);
    }
    ~Server() {
        boost::system::error_code ec;
        acceptor_.close(ec);
    }
    int accepted() const { return accepted_; }

  private:
    awaitable<void> accept_loop() {
        for (;;) {
            boost::system::error_code ec;
            Socket s = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
            if (ec) co_return;
            int index = accepted_++;
            asio::co_spawn(acceptor_.get_executor(), serve(std::move(s), index), asio::detached);
        }
    }
    awaitable<void> serve(Socket s, int index) {
        co_await script_(s, index);
    }

    asio::local::stream_protocol::acceptor acceptor_;
    Script script_;
    int accepted_ = 0;
};

// Runs `task` on `io` until it finishes (at most `limit`); fails the test on
// timeout.  Servers keep running in the background and are stopped with io.
template <class T>
T run(asio::io_context& io, awaitable<T> task,
      std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::optional<T> result;
    std::exception_ptr error;
    asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T v) {
        error = e;
        result = std::move(v);
    });
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!result && !error && std::chrono::steady_clock::now() < deadline) {
        if (io.stopped()) io.restart();
        io.run_one_for(std::chrono::milliseconds(50));
    }
    if (error) std::rethrow_exception(error);
    if (!result) throw std::runtime_error("client coroutine did not finish in time");
    return std::move(*result);
}

} // namespace fake
