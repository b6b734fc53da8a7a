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
// client is "up" from a connect whose ROLE is answered "master" (a stopped
// server accepts connections too; a replica would refuse every write) and
// whose INFO gives the server's run_id (instance()), until the connection
// is lost: one warning is logged per outage ("redis server X: ...; using
// local limits") and one line when it is back, and the owner is told of
// both.
//
// With Redis Sentinel (RedisOptions::sentinels), each connection starts by
// asking the sentinels in turn, beginning with the last one that answered,
// where the master is (SENTINEL get-master-addr-by-name); the master then
// has to say it is one (ROLE).  A failover is followed by asking again
// whenever the connection is lost, which it is when the old master dies,
// when Sentinel turns it into a replica (Sentinel closes its clients'
// connections then), and when a write is refused as READONLY.
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
    RedisAddress address; // without Sentinel
    // With Sentinel: the master's name and the sentinels to ask.
    std::string master_name;
    std::vector<RedisAddress> sentinels;
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
    // The server connected to last (with Sentinel: the master it named).
    const RedisAddress& server() const { return server_; }
    // The run_id of the server connected to last: it changes when the
    // server restarts or another one takes over.
    const std::string& instance() const { return instance_; }
    // How many connections came up so far (the current one's number).
    uint64_t connection() const { return connection_; }
    // The server's name for log lines: "redis server HOST:PORT", or with
    // Sentinel "redis master NAME (HOST:PORT)".
    std::string where() const;
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

    // One connection attempt: to the server, or first to a sentinel.
    void connect();
    // Asks the next sentinel of this round where the master is.
    void ask_sentinel();
    // Connects to `a`: a host name is resolved without blocking, then
    // hiredis is handed an address it need not look up.
    void open(const RedisAddress& a);
    void connect_to(const std::string& host, int port);
    // A step of the connection failed: with Sentinel, while asking, the
    // next sentinel is asked; else the connection is lost.
    void failed(const std::string& why);
    // The connection is lost or could not be made: fail what is in flight,
    // warn once per outage, and retry after the backoff.
    void lost(const std::string& why);
    // The connection has answered ROLE and INFO: up.
    void came_up();
    // Drops the current context ourselves (deadline, close): hiredis calls
    // every pending callback with no reply.
    void drop(const std::string& why);
    // drop(), posted: from inside a hiredis callback.
    void drop_later(redisAsyncContext* ac, const std::string& why);
    void retry_later();
    // Deadline timer for the oldest command in flight (or the connect).
    void arm_deadline();
    void deadline_passed();
    // Posts `done(reply)` to the loop.
    void deliver(Callback done, RedisReply reply);

    static void on_connect(const redisAsyncContext* ac, int status);
    static void on_sentinel(redisAsyncContext* ac, void* reply, void* privdata);
    static void on_role(redisAsyncContext* ac, void* reply, void* privdata);
    static void on_info(redisAsyncContext* ac, void* reply, void* privdata);
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
    RedisAddress target_;      // what the current context connects to
    RedisAddress server_;      // the server connected to last
    std::string instance_;     // its run_id
    uint64_t connection_ = 0;  // connections that came up
    bool asking_ = false;      // the context is a sentinel's
    size_t sentinel_ = 0;      // the sentinel to ask first
    size_t asked_ = 0;         // sentinels asked in this round
    std::string sentinel_why_; // why the last one did not answer
};

} // namespace cqmgr::cluster
