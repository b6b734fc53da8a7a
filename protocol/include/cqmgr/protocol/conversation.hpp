// One client connection to a Postfix service socket (`private/smtp`,
// `private/rewrite`, `private/bounce`, ...) that exchanges attribute lists.
// Every operation has a deadline; when it passes, the socket is cancelled and
// the operation fails with a "timeout" error.  Nothing here blocks the loop.
// Any failure closes the socket: a conversation is never reused after one.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/attr.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cqmgr::protocol {

// Why `path` cannot name a UNIX-domain socket (sockaddr_un holds at most
// 107 bytes of it; Asio throws beyond that), or empty when it can.
std::string socket_path_problem(std::string_view path);

class Conversation : public std::enable_shared_from_this<Conversation> {
  public:
    using Duration = std::chrono::steady_clock::duration;

    // Creates an unconnected conversation; always hold it in a shared_ptr.
    static std::shared_ptr<Conversation> create(asio::any_io_executor ex);

    // Connects to the UNIX-domain stream socket at `path` (relative to the
    // queue directory, which is our working directory).
    awaitable<bool> connect(const std::string& path, Duration timeout);
    // The same in two steps.  connect_start() tries at once, without
    // waiting, and is false when that already failed (no such socket,
    // refused): a caller learns it before it does anything else, as
    // Postfix's non-blocking connect lets stock qmgr learn it.
    // connect_finish() waits for a connection the first step left pending.
    bool connect_start(const std::string& path);
    awaitable<bool> connect_finish(Duration timeout);

    // Replaces the decoder's bounds (before the first read).
    void set_limits(AttrLimits limits) { parser_ = AttrParser(limits); }

    // Reads one complete attribute list.  Returns false on EOF, I/O error,
    // timeout or malformed input; error() then says which.
    awaitable<bool> read_list(AttrList& out, Duration timeout);

    // How read_some() ended.
    enum class ReadEnd { data, closed, timeout };
    // Reads what the peer has sent (at least one byte, at most a Postfix
    // stream buffer's 4096) and appends it to pending().  closed: end of
    // file or a read error (error() says which); timeout: nothing in time.
    // Both close the socket.
    awaitable<ReadEnd> read_some(Duration timeout);
    // Bytes read and not yet consumed, by read_list() or by the caller of
    // read_some().
    std::string& pending() { return pending_; }

    // Writes all of `bytes`.
    awaitable<bool> write(std::string bytes, Duration timeout);

    // Closes the socket (idempotent).
    void close();

    bool is_open() const { return socket_.is_open(); }
    // True when the socket is readable now: for an idle conversation that
    // means the server closed it or sent something we did not ask for.
    bool readable_now();
    const std::string& error() const { return error_; }
    // True when the last failure was EOF before any byte of a list.
    bool clean_eof() const { return clean_eof_; }

  private:
    // Lets create() alone use the public constructor that make_shared needs.
    struct Private {};

  public:
    Conversation(Private, asio::any_io_executor ex) : socket_(ex), timer_(ex) {}

  private:
    // Sets the deadline of one operation.  The timer is left running between
    // operations and restarted only when it would fire after the new
    // deadline; when it fires early it waits again for what is left.  So
    // back-to-back operations cost no timer system calls.
    void arm(Duration timeout);
    // Ends the operation's deadline; returns true if it passed while the
    // operation ran.
    bool disarm();
    // Starts the timer for `due`.
    void start_timer(std::chrono::steady_clock::time_point due);

    asio::local::stream_protocol::socket socket_;
    asio::steady_timer timer_;
    bool timed_out_ = false;
    bool guarding_ = false;  // an operation is under its deadline
    bool timer_set_ = false; // the timer is waiting to fire at timer_due_
    std::chrono::steady_clock::time_point deadline_{};
    std::chrono::steady_clock::time_point timer_due_{};
    AttrParser parser_;
    std::string pending_; // bytes read but not yet parsed
    std::string error_;
    bool clean_eof_ = false;
    std::string connect_path_; // set while a connection is pending
    bool connected_ = false;   // connect_start() connected at once
};

} // namespace cqmgr::protocol
