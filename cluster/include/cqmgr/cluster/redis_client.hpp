// An asynchronous Redis client on the Asio event loop, built on hiredis's
// asynchronous API with an adapter of our own: the connection's socket is
// watched by a boost::asio::posix::stream_descriptor, so hiredis reads and
// writes only when the loop says the socket is ready, and nothing blocks.
//
// Every command has a deadline (RedisOptions::command_timeout).  Redis
// answers in order, so one timer watches the oldest command; when its
// deadline passes the connection is dropped and every command in flight
// fails at once.  A dropped or refused connection is retried with a
// growing backoff; while there is none, commands fail at once.  The
// client is "up" from a connect whose first PING is answered (a stopped
// server accepts connections too) until the connection is lost:
// one warning is logged per outage ("redis server X: ...; using local
// limits") and one line when it is back, and the owner is told of both.
//
// hiredis writes with write(2): the process must ignore SIGPIPE (the
// daemon does), or a write to a server that just went away kills it.
//
// Replies are delivered by posting to the loop, never from inside hiredis,
// so a callback may issue commands or close the client.
#pragma once

#include "cqmgr/cluster/redis_address.hpp"
#include "cqmgr/cluster/redis_reply.hpp"
#include "cqmgr/protocol/asio.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct redisAsyncContext;
struct redisReply;

namespace cqmgr::cluster {

struct RedisOptions {
    RedisAddress address;
    std::chrono::milliseconds command_timeout{100};
    std::chrono::milliseconds connect_timeout{1000};
    std::chrono::milliseconds backoff_min{100};
    std::chrono::milliseconds backoff_max{5000};
};

class RedisClient : public std::enable_shared_from_this<RedisClient> {
  public:
    using Callback = std::function<void(const RedisReply&)>;
    using LogFn = std::function<void(bool warning, const std::string& line)>;
    using StateFn = std::function<void(bool up)>;

    // Creates a client; start() makes the first connection.
    static std::shared_ptr<RedisClient> create(asio::any_io_executor ex, RedisOptions options,
                                               LogFn log = {}, StateFn state = {});
    ~RedisClient();
    RedisClient(const RedisClient&) = delete;
    RedisClient& operator=(const RedisClient&) = delete;

    // Connects, and keeps reconnecting after every loss until close().
    void start();
    // Who hears of the changes (instead of the StateFn given to create()).
    void on_state(StateFn state) { state_fn_ = std::move(state); }
    // Drops the connection (commands in flight fail) and stops reconnecting.
    void close();

    // Sends one command (its arguments as binary-safe strings); `done` gets
    // the reply, or a failure within the deadline.
    void command(std::vector<std::string> args, Callback done);

    bool up() const { return state_ == State::up; }
    const RedisOptions& options() const { return options_; }
    // Commands sent and answered, and failures (for tests and metrics).
    struct Stats {
        long sent = 0, answered = 0, failed = 0, timeouts = 0, connects = 0, outages = 0;
    };
    const Stats& stats() const { return stats_; }

  private:
    struct Attachment;
    struct Pending {
        Clock::time_point deadline;
        Callback done;
    };
    enum class State { idle, resolving, connecting, up, waiting, closed };

    RedisClient(asio::any_io_executor ex, RedisOptions options, LogFn log, StateFn state);

    // One connection attempt: resolve a host name without blocking, then
    // hand hiredis an address it need not look up.
    void connect();
    void connect_to(const std::string& host, int port);
    // The connection is lost or could not be made: fail what is in flight,
    // warn once per outage, and retry after the backoff.
    void lost(const std::string& why);
    // Drops the current context ourselves (deadline, close): hiredis calls
    // every pending callback with no reply.
    void drop(const std::string& why);
    void retry_later();
    // Deadline timer for the oldest command in flight (or the connect).
    void arm_deadline();
    void deadline_passed();
    // Posts `done(reply)` to the loop.
    void deliver(Callback done, RedisReply reply);

    static void on_connect(const redisAsyncContext* ac, int status);
    static void on_hello(redisAsyncContext* ac, void* reply, void* privdata);
    static void on_disconnect(const redisAsyncContext* ac, int status);
    static void on_reply(redisAsyncContext* ac, void* reply, void* privdata);

    asio::any_io_executor ex_;
    RedisOptions options_;
    LogFn log_;
    StateFn state_fn_;
    State state_ = State::idle;
    redisAsyncContext* ctx_ = nullptr;
    std::deque<Pending> pending_; // in the order hiredis will answer them
    std::string fail_reason_;     // what the commands of a dropped context fail with
    Clock::time_point connect_deadline_{};
    asio::steady_timer deadline_;
    bool deadline_armed_ = false;
    Clock::time_point deadline_due_{};
    asio::steady_timer retry_;
    asio::ip::tcp::resolver resolver_;
    std::chrono::milliseconds backoff_{0};
    bool in_outage_ = false; // warned, not yet back
    bool ever_up_ = false;
    Stats stats_;
};

// The text of a reply for log lines and tests ("OK", "(nil)", "3", "[a, b]").
std::string describe(const RedisReply& r);

} // namespace cqmgr::cluster
