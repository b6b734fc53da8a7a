// Client of trivial-rewrite's resolve service (`private/rewrite`).  One
// long-lived connection shared by all messages; requests are serialised on
// it.  Any failure is logged, the connection is dropped, and the request is
// retried after a second: a resolver outage delays mail, it never loses it.
#pragma once

#include "counters.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/protocol/rewrite_client.hpp"
#include "resolve_cache.hpp"

#include <deque>
#include <functional>
#include <optional>
#include <string>

namespace cqmgr::conf {
class MainCf;
struct QmgrParams;
} // namespace cqmgr::conf

namespace cqmgr::qmgr {

// What trivial-rewrite is configured with, as far as the resolve cache
// needs to know (main.cf, and its own master.cf line).
ResolverSettings resolver_settings(const conf::MainCf& cf, const conf::QmgrParams& params);

class Resolver {
  public:
    // Counts its requests and cache hits in `counters`; keeps answers as
    // `cache` says (see resolve_cache.hpp).
    Resolver(asio::any_io_executor ex, std::string service, std::chrono::seconds ipc_timeout,
             Counters& counters, ResolveCacheConfig cache = {});

    // Resolves `address` for `sender`; `request_class` is "resolve" or
    // "verify".  Never fails: it retries until trivial-rewrite answers.
    awaitable<protocol::ResolveReply> resolve(std::string request_class, std::string sender,
                                              std::string address);
    // The kept answer to the question, if any, without a request (and
    // without a coroutine: most recipients of a busy run are answered
    // here).
    std::optional<protocol::ResolveReply> cached(std::string_view request_class,
                                                 std::string_view sender, std::string_view address);

    // Rewrites `address` (external form) with `rule` ("local" or "remote"),
    // as qmgr does for the redirect record; returns the external form.
    awaitable<std::string> rewrite(std::string rule, std::string address);

    // True once trivial-rewrite has answered a request (the health
    // endpoint's readiness).
    bool answered() const { return answered_; }
    // Resolves "postmaster" once in the background, retried as any
    // request is, so that answered() does not wait for mail.
    void probe();

  private:
    // Logs a failed attempt and waits before the next one.
    awaitable<void> pause_after(const protocol::RewriteError& error);
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
    bool answered_ = false;
    std::deque<asio::steady_timer*> waiters_;

    // Answers reused for 30 s: by default only the last one, like stock's
    // resolve client (recipients arrive sorted, so repeats of an address
    // are adjacent).
    ResolveCache cache_;
};

} // namespace cqmgr::qmgr
