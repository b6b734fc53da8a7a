// The shared state in Redis, under one key prefix (cqmgr_redis_key_prefix):
//
//   <prefix>dead:<transport>:<destination>   a dead mark: "<status>\t<reason>",
//                                             expiring when the destination
//                                             may be tried again
//   <prefix>lease:<scope>                     concurrency leases: a sorted set
//                                             of lease ids scored by expiry
//                                             (ms, Redis's clock)
//   <prefix>rate:<scope>                      a GCRA cell: the theoretical
//                                             arrival time (ms, Redis's clock)
//   <prefix>instance                          the run_id of the Redis server
//                                             the cluster last used
//   <prefix>fence                             while it exists, no new lease is
//                                             granted (a store that lost its
//                                             state: see lease_acquire)
//   <prefix>board:<name>[:expiry|:version]    a board of records (redis_board.cpp)
//
// Leases and rate cells are read and changed only by Lua scripts, so each
// step is atomic across hosts, and every time comes from Redis's own clock
// (TIME), so the hosts' clocks need not agree.  Every key expires by itself
// when nobody renews it: a host that dies leaves nothing behind for longer
// than a lease's time.
#pragma once

#include "cqmgr/cluster/redis_client.hpp"
#include "cqmgr/cluster/redis_script.hpp"
#include "cqmgr/cluster/shared_state.hpp"

#include <memory>

namespace cqmgr::cluster {

class RedisSharedState : public SharedState {
  public:
    RedisSharedState(std::shared_ptr<RedisClient> client, std::string prefix);

    RedisClient& client() { return *client_; }
    const std::string& prefix() const { return prefix_; }

    void start(StateFn state) override;
    void close() override;
    bool up() const override { return client_->up(); }
    uint64_t connection() const override { return client_->connection(); }

    void dead_set(const std::string& transport, const std::string& queue, const DeadMark& mark,
                  int64_t ttl_ms, std::function<void(bool ok)> done = {}) override;
    void dead_get(const std::string& transport, const std::string& queue,
                  std::function<void(bool failed, std::optional<DeadMark>)> done) override;
    void dead_clear(const std::string& transport, const std::string& queue) override;
    void lease_acquire(const std::string& scope, const std::string& id, int limit, int64_t ttl_ms,
                       std::function<void(const LeaseAnswer&)> done) override;
    void lease_renew(const std::string& scope, const std::vector<std::string>& ids, int limit,
                     int64_t ttl_ms, std::function<void(const RenewAnswer&)> done) override;
    void lease_release(const std::string& scope, const std::string& id,
                       std::function<void(bool ok)> done = {}) override;
    void rate_take(const std::string& scope, const RateSpec& rate, double horizon_ms,
                   double own_tat_ms, std::function<void(const RateAnswer&)> done) override;
    bool release_blocking(const Leases& leases) override;
    void board_put(const std::string& board, const BoardRecord& record,
                   std::function<void(bool ok)> done = {}) override;
    void board_read(const std::string& board, const std::string& known,
                    std::function<void(const BoardAnswer&)> done) override;

    std::string dead_key(const std::string& transport, const std::string& queue) const {
        return prefix_ + "dead:" + transport + ":" + queue;
    }
    std::string lease_key(const std::string& scope) const { return prefix_ + "lease:" + scope; }
    std::string rate_key(const std::string& scope) const { return prefix_ + "rate:" + scope; }
    std::string instance_key() const { return prefix_ + "instance"; }
    std::string fence_key() const { return prefix_ + "fence"; }
    std::string board_key(const std::string& board) const { return prefix_ + "board:" + board; }

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
                             const SharedState::Leases& leases);

// The scripts, for tests that run them directly.
const RedisScript& gcra_script();
const RedisScript& lease_acquire_script();
const RedisScript& lease_renew_script();
const RedisScript& dead_get_script();
const RedisScript& board_put_script();
const RedisScript& board_read_script();

} // namespace cqmgr::cluster
