// What cqmgr hosts share through Redis, under one key prefix
// (cqmgr_redis_key_prefix):
//
//   <prefix>dead:<transport>:<destination>   a dead mark: "<status>\t<reason>",
//                                             expiring when the destination
//                                             may be tried again
//   <prefix>lease:<scope>                     concurrency leases: a sorted set
//                                             of lease ids scored by expiry
//                                             (ms, Redis's clock)
//   <prefix>rate:<scope>                      a GCRA cell: the theoretical
//                                             arrival time (ms, Redis's clock)
//
// Leases and rate cells are read and changed only by Lua scripts, so each
// step is atomic across hosts, and every time comes from Redis's own clock
// (TIME), so the hosts' clocks need not agree.  Every key expires by itself
// when nobody renews it: a host that dies leaves nothing behind for longer
// than a lease's time.
#pragma once

#include "cqmgr/cluster/rate_spec.hpp"
#include "cqmgr/cluster/redis_client.hpp"
#include "cqmgr/cluster/redis_script.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::cluster {

struct DeadMark {
    std::string status; // e.g. 4.4.1
    std::string reason;
    int64_t remaining_ms = 0; // until it expires
};

struct LeaseAnswer {
    bool failed = false; // Redis did not answer: decide locally
    bool granted = false;
    int64_t live = 0; // leases held in the cluster after the step
};

struct RateAnswer {
    bool failed = false; // Redis did not answer: decide locally
    bool allowed = false;
    double retry_after_ms = 0; // when not allowed
    double wait_ms = 0;        // when allowed: until the booked start is due (0: now)
};

class SharedState {
  public:
    SharedState(std::shared_ptr<RedisClient> client, std::string prefix);

    RedisClient& client() { return *client_; }
    const std::string& prefix() const { return prefix_; }

    // Marks a destination dead for `ttl_ms`; `done(ok)`.
    void dead_set(const std::string& transport, const std::string& queue, const DeadMark& mark,
                  int64_t ttl_ms, std::function<void(bool ok)> done = {});
    // Reads a destination's dead mark; `done(failed, mark)`.
    void dead_get(const std::string& transport, const std::string& queue,
                  std::function<void(bool failed, std::optional<DeadMark>)> done);
    // Clears a dead mark (the destination answered again).
    void dead_clear(const std::string& transport, const std::string& queue);

    // Takes lease `id` in `scope` if fewer than `limit` live leases are
    // held there (holding it already renews it); it lasts `ttl_ms`.
    void lease_acquire(const std::string& scope, const std::string& id, int limit, int64_t ttl_ms,
                       std::function<void(const LeaseAnswer&)> done);
    // Renews the leases `ids` for another `ttl_ms`; leases Redis lost (a
    // restart without persistence) are taken again, so that the cluster
    // sees what is really in use.
    void lease_renew(const std::string& scope, const std::vector<std::string>& ids, int64_t ttl_ms,
                     std::function<void(bool ok)> done = {});
    // Gives lease `id` back.
    void lease_release(const std::string& scope, const std::string& id,
                       std::function<void(bool ok)> done = {});

    // Takes one start from the GCRA cell of `scope` at `rate`, now or
    // booked up to `horizon_ms` ahead (see gcra_take()).  `own_tat_ms`: the
    // asking host's own theoretical arrival time, in ms from now (0 or
    // less: none); the cell is taken to be at least there, so that a cell
    // Redis lost (a restart) does not let this host start again at once.
    void rate_take(const std::string& scope, const RateSpec& rate, double horizon_ms,
                   double own_tat_ms, std::function<void(const RateAnswer&)> done);

    std::string dead_key(const std::string& transport, const std::string& queue) const {
        return prefix_ + "dead:" + transport + ":" + queue;
    }
    std::string lease_key(const std::string& scope) const { return prefix_ + "lease:" + scope; }
    std::string rate_key(const std::string& scope) const { return prefix_ + "rate:" + scope; }

  private:
    std::shared_ptr<RedisClient> client_;
    std::string prefix_;
};

// Gives leases back over a connection of its own that blocks, each step
// within `options.command_timeout`: for a process that is about to exit
// and has no event loop left to wait on.  `leases` are (scope, id) pairs.
// False when Redis could not be reached or did not answer in time (the
// leases then expire by themselves).
bool release_leases_blocking(const RedisOptions& options, const std::string& prefix,
                             const std::vector<std::pair<std::string, std::string>>& leases);

// The scripts, for tests that run them directly.
const RedisScript& gcra_script();
const RedisScript& lease_acquire_script();
const RedisScript& lease_renew_script();
const RedisScript& dead_get_script();

} // namespace cqmgr::cluster
