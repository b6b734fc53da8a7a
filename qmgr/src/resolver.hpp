// Client of trivial-rewrite's resolve service (`private/rewrite`).  One
// long-lived connection shared by all messages; requests are serialised on
// it.  Any failure is logged, the connection is dropped, and the request is
// retried after a second: a resolver outage delays mail, it never loses it.
#pragma once

#include "counters.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/protocol/rewrite_client.hpp"

#include <deque>
#include <functional>
#include <optional>
#include <string>

namespace cqmgr::qmgr {

class Resolver {
  public:
    // Counts its requests and cache hits in `counters`.
    Resolver(asio::any_io_executor ex, std::string service, std::chrono::seconds ipc_timeout,
             Counters& counters);

    // Resolves `address` for `sender`; `request_class` is "resolve" or
    // "verify".  Never fails: it retries until trivial-rewrite answers.
    awaitable<protocol::ResolveReply> resolve(std::string request_class, std::string sender,
                                              std::string address);

    // Rewrites `address` (external form) with `rule` ("local" or "remote"),
    // as qmgr does for the redirect record; returns the external form.
    awaitable<std::string> rewrite(std::string rule, std::string address);

  private:
    // Logs a failed attempt and waits before the next one.
    awaitable<void> pause_after(const std::string& error);
    // Serialises callers (the protocol client serialises single requests;
    // this serialises whole retry loops).
    awaitable<void> take_turn();
    void release_turn();

    asio::any_io_executor ex_;
    std::string service_;
    protocol::RewriteClient client_;
    Counters& counters_;
    int connect_failures_ = 0; // consecutive failed connects, for "connect #N"
    bool busy_ = false;
    std::deque<asio::steady_timer*> waiters_;

    // The last answer, reused for the same question within 30 s: one entry,
    // like stock's resolve client (recipients arrive sorted, so repeats of
    // an address are adjacent).
    struct Last {
        std::string request_class, sender, address;
        protocol::ResolveReply reply;
        std::chrono::steady_clock::time_point when;
    };
    std::optional<Last> last_;
};

} // namespace cqmgr::qmgr
