// What the daemon has done since it started, counted where it happens and
// read by the control socket's `summary`, the Prometheus metrics and the
// USDT-free parts of the admin tools.  Plain numbers, updated on the event
// loop thread only.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace cqmgr::qmgr {

struct Counters {
    // Delivery requests by the agent's answer (see docs/control-protocol.md).
    struct Deliveries {
        uint64_t done = 0;        // status 0: every recipient of the entry finished
        uint64_t deferred = 0;    // status nonzero: some recipients were deferred
        uint64_t crashed = 0;     // no valid reply
        uint64_t unavailable = 0; // the request never reached an agent
    };
    // Per transport, and the hop status class (index = first digit, 0 = none).
    std::map<std::string, Deliveries> deliveries;
    std::map<std::string, std::array<uint64_t, 6>> dsn_class;
    // Message ends.
    uint64_t messages_removed = 0;
    uint64_t messages_deferred = 0;
    uint64_t messages_bounced = 0;
    uint64_t messages_expired = 0;
    // Messages taken into the active queue.
    uint64_t messages_activated = 0;
    // Resolver requests sent and answered from a cache.
    uint64_t resolver_requests = 0;
    uint64_t resolver_cache_hits = 0;
    // In-flow tokens written to master.
    uint64_t in_flow_tokens = 0;
};

} // namespace cqmgr::qmgr
