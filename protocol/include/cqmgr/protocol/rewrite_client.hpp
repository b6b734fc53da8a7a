// Client for trivial-rewrite(8) (socket private/rewrite, announcement
// "trivial_rewrite_protocol"): resolve (and verify-class resolve) and rewrite
// requests over one shared, long-lived connection, the way Postfix's
// clnt_stream does it:
//  * connect on first use; check the announcement;
//  * drop the connection when it was idle longer than ipc_idle, older than
//    ipc_ttl, readable before a request (the server closed it), after a
//    reply with nonzero server flags, and after any failure;
//  * one request at a time: concurrent callers queue up.
// Each call is one attempt.  Stock qmgr retries a failed resolve forever,
// one second apart; that loop and the 30 s answer cache stay with the
// caller.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/conversation.hpp"
#include "cqmgr/protocol/messages.hpp"

#include <chrono>
#include <deque>
#include <memory>
#include <string>

namespace cqmgr::protocol {

struct RewriteTimeouts {
    using Duration = std::chrono::steady_clock::duration;
    Duration io = std::chrono::seconds(60);    // each connect/read/write: qmgr_ipc_timeout
    Duration idle = std::chrono::seconds(5);   // ipc_idle
    Duration ttl = std::chrono::seconds(1000); // ipc_ttl
};

// "resolve" for normal mail, "verify" for address probes (selects the
// address_verify_* maps on the server).
namespace resolve_class {
inline constexpr std::string_view regular = "resolve";
inline constexpr std::string_view verify = "verify";
} // namespace resolve_class

// What went wrong in one request to trivial-rewrite: the step that failed,
// the socket, and what the message says of it.
struct RewriteError {
    enum class Kind {
        connect,      // connect(2) failed; detail: the system's reason
        read,         // reading the announcement or the reply failed; the reason
        announcement, // not trivial-rewrite's announcement; the names it had
        write,        // writing the request failed; the reason
        malformed,    // not a reply to the request; the decoder's message
        no_transport, // a resolve reply with an empty transport; the address asked
        no_recipient, // one with an empty recipient for an address; the address
    };
    Kind kind = Kind::read;
    std::string path;
    std::string detail;

    // The warning's words, e.g. "connect to private/rewrite: No such file
    // or directory".
    std::string message() const;
};

// The reply, or what kept it from coming.
using ResolveResult = Result<ResolveReply, RewriteError>;
// The rewritten address, or what kept it from coming.
using RewriteResult = Result<std::string, RewriteError>;

class RewriteClient {
  public:
    // `path` is the socket, normally "private/" + rewrite_service_name.
    RewriteClient(asio::any_io_executor ex, std::string path, RewriteTimeouts timeouts = {});
    RewriteClient(const RewriteClient&) = delete;
    RewriteClient& operator=(const RewriteClient&) = delete;
    ~RewriteClient();

    // Resolves `address` (internal form) for `sender`.  Besides transport and
    // protocol errors, a reply with an empty transport, or an empty
    // recipient for a non-empty address, is an error (Postfix's
    // resolve_clnt retries those too).
    awaitable<ResolveResult> resolve(std::string request_class, std::string sender,
                                     std::string address);

    // Rewrites `address` (external form) with `rule` ("local" or "remote").
    awaitable<RewriteResult> rewrite(std::string rule, std::string address);

    // Drops the connection (the next call reconnects).
    void close();

    const std::string& path() const { return path_; }
    // Connections opened so far (for tests and statistics).
    int connects() const { return connects_; }

  private:
    // Sends one request and reads one reply list, (re)connecting as needed.
    awaitable<Result<void, RewriteError>> exchange(const std::string& request, AttrList& reply);
    // The resolve reply in `reply` to a request for `address`, checked.
    ResolveResult resolve_answer(const AttrList& reply, const std::string& address) const;
    // The error of `kind` on this client's socket.
    Failure<RewriteError> failure(RewriteError::Kind kind, std::string detail) const;
    // Waits until no other exchange is running, then takes the turn.
    awaitable<void> take_turn();
    // Ends this caller's turn and wakes the next waiter.
    void release_turn();

    asio::any_io_executor ex_;
    std::string path_;
    RewriteTimeouts timeouts_;
    std::shared_ptr<Conversation> conv_;
    Clock::time_point born_{}, used_{};
    int connects_ = 0;
    bool busy_ = false;
    std::deque<std::shared_ptr<asio::steady_timer>> waiters_;
};

} // namespace cqmgr::protocol
