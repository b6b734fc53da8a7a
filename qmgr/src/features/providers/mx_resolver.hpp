// Asynchronous MX lookups of destination domains, on the daemon's Asio
// event loop, for grouping destinations into providers.
//
// c-ares does the DNS: its sockets are watched with
// asio::posix::stream_descriptor (c-ares says which through its
// sock_state_cb), and one timer follows ares_timeout().  Nothing blocks
// and nothing waits for DNS: lookup() returns at once, and its callback
// comes later on the loop.  Each lookup has a deadline; their number is
// bounded (in flight, queued, waiting callbacks), and answers are kept in
// a TTL cache (MxCache).  The grouping changes nothing about routing:
// smtp(8) resolves and delivers on its own.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "mx_answer.hpp"
#include "mx_channel.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace cqmgr::qmgr {

// What the resolver has done (counters) and holds (gauges).
struct MxResolverStats {
    uint64_t lookups = 0;      // calls of lookup()
    uint64_t cache_hits = 0;   // answered from the cache
    uint64_t joined = 0;       // joined a lookup of the same domain under way
    uint64_t queries = 0;      // queries sent to DNS
    uint64_t busy = 0;         // refused as busy
    uint64_t deadlines = 0;    // lookups ended by their deadline
    uint64_t watch_errors = 0; // c-ares sockets the loop could not watch
    // Results delivered to callers (cache hits included), by MxOutcome.
    std::array<uint64_t, 6> outcomes{};
    size_t in_flight = 0; // queries sent and not finished
    size_t queued = 0;    // domains waiting for a query slot
    size_t cached = 0;    // answers in the cache
};

class MxResolver {
  public:
    using Callback = std::function<void(const MxAnswer&)>;

    // Takes over `channel` (opened before the jail) and watches its
    // sockets on `ex`, a single-threaded loop's executor.
    MxResolver(asio::any_io_executor ex, MxChannel channel, MxResolverOptions options);
    // Ends every lookup: c-ares's queries are dropped, and the callbacks of
    // lookups without an answer yet are never called (those already
    // posted to the loop still run).
    ~MxResolver();
    MxResolver(const MxResolver&) = delete;
    MxResolver& operator=(const MxResolver&) = delete;

    // Looks up the MX set of `domain` (any case, a trailing dot allowed).
    // `done` is called exactly once, on the loop and never from within
    // lookup(): with the cached answer when there is a fresh one; else
    // with the lookup's result, by the deadline at the latest (a timeout
    // then); or at once with `busy` when the bounds are reached; or with
    // `server_failure` for a name that is not a plain host name.
    void lookup(std::string_view domain, Callback done);

    // The fresh cached answer of `domain`, or null; asks nothing.  The
    // pointer holds until the resolver is called again or the loop runs
    // one of its handlers (an answer may replace the entry).
    const MxAnswer* cached(std::string_view domain);

    MxResolverStats stats() const;
    const MxResolverOptions& options() const;

  private:
    struct Impl;
    std::shared_ptr<Impl> impl_; // handlers on the loop hold it weakly
};

} // namespace cqmgr::qmgr
