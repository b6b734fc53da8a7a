// Limits shared across a cluster (cqmgr_cluster_concurrency_limits,
// cqmgr_rate_limits), on Redis when cqmgr_redis_server is set.
//
// The scheduler core is synchronous; Redis is not.  So the limits are
// turned into a gate on each queue they cover (core::Queue::gate): the
// number of deliveries that may be in flight there.  What the gate admits
// is acquired ahead, asynchronously:
//   - a concurrency limit: leases taken from the cluster's lease set one at
//     a time while the queue has waiting mail and every lease it holds is
//     in use; a lease whose delivery ended is kept for the next delivery
//     while mail waits, else given back, either only 10 ms after the end
//     (the receiver may still count the closing connection); all are
//     renewed every third of cqmgr_cluster_lease_time, and expire if this
//     host dies;
//   - a rate: one token at a time from the shared GCRA cell, asked for
//     when the queue has waiting mail and no token.  The cell books a start
//     up to a horizon ahead (cluster::gcra_booking_horizon_ms) and the token
//     comes when it is due, so the cell's rate is kept exactly however late
//     the next ask is; beyond the horizon, a refusal says when to ask again.
// While Redis is down (or when no server is configured) the same limits are
// applied on this host alone: the concurrency count to this host's
// deliveries, the rate to a local GCRA cell.  Delivery never waits for
// Redis: a gate opens from local state at once when Redis fails.
//
// Dead marks (with cqmgr_redis_server): a destination this host declares
// dead is marked dead in Redis, with its reason, until its revival time; a
// destination first seen here (its queue created) that carries a mark is
// declared dead at once, until the mark's end, without a connection
// attempt.  A revival (by time or by a flush) clears the mark.
//
// A table's key is tried as transport:destination, then destination, then
// transport; the key that matched is the limit's scope, shared by every
// queue (and host) it covers.
#pragma once

#include "cluster_gate.hpp"
#include "cqmgr/cluster/gcra.hpp"
#include "cqmgr/cluster/redis_shared_state.hpp"
#include "cqmgr/conf/lookup_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace cqmgr::qmgr {

class ClusterLimits {
  public:
    struct Tables {
        conf::LookupTables rates;
        conf::LookupTables concurrency;
    };
    // Reads the two tables (before the jail); throws conf::ConfigError.
    static Tables open_tables(const conf::QmgrParams& params);

    ClusterLimits(asio::io_context& io, const conf::QmgrParams& params, Tables tables,
                  core::Scheduler& sched);
    ~ClusterLimits();

    // True when some limit is configured (else nothing here does anything).
    bool active() const { return active_; }
    // How many queues have a gate (for tests).
    size_t gate_count() const { return gates_.size(); }
    // Connects to Redis, if configured (or to the shared state given to
    // use_shared()).
    void start();
    // Keeps the shared state in `shared` instead of the Redis server that
    // cqmgr_redis_server names (tests: a fake); before start().
    void use_shared(std::unique_ptr<cluster::SharedState> shared);

    // The gate of a new queue (Driver::queue_gate).
    std::optional<int> queue_gate(const core::Queue& q);
    // Asks for the leases and tokens that queues with waiting mail need.
    void refresh();
    // A delivery to `q` was started (after select_entry).
    void started(const core::Queue& q);
    // A delivery to `transport`/`queue` ended (after delivery_done).
    void finished(const std::string& transport, const std::string& queue);
    // The process is about to exit: gives the leases not in use back at
    // once, over a blocking connection (within cqmgr_redis_timeout_ms a
    // step); those of deliveries still in flight expire by themselves.
    void release_at_exit();
    // Queue `q` was declared dead, or is back (Driver::queue_window).
    void queue_dead(const core::Queue& q);
    void queue_revived(const core::Queue& q);

  private:
    struct Gate;
    Gate* gate_for(const std::string& key);
    // Sets the core's gate of `g`'s queue from what `g` holds.
    void apply(Gate& g);
    // What `g` holds and has in flight, for the gate's arithmetic.
    GateCounts counts(Gate& g);
    // The gate that what `g` holds allows.
    std::optional<int> gate_value(Gate& g);
    // Asks for what `g` needs, if anything.
    void want(Gate& g);
    void ask_lease(Gate& g);
    void ask_token(Gate& g);
    // The rate's answer for `g`: a start granted `ms` from now (0: the
    // token at once), or refused for `ms`.
    void token_answer(Gate& g, bool granted, double ms);
    // After a change in what `g` has in flight: spare leases go back, the
    // gate is set, and what is wanted is asked for.
    void settle(Gate& g);
    // Leases `g` holds beyond what its queue can use go back.
    void trim(Gate& g, const core::Queue* q);
    void release_all(Gate& g);
    // Asks for a lease again after `ms`.
    void retry_after(Gate& g, double ms);
    void renew_all();
    void arm_renewal();
    void state_changed(bool up);
    bool shared() const { return shared_ && shared_->up(); }
    // Reads the dead mark of a queue just created; mark_read() acts on it
    // (the mark, or none when there is none or Redis did not answer).
    void read_dead_mark(const std::string& transport, const std::string& queue);
    void mark_read(const std::string& transport, const std::string& queue,
                   std::optional<cluster::DeadMark> m);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    Tables tables_;
    core::Scheduler& sched_;
    bool active_ = false;
    std::unique_ptr<cluster::SharedState> shared_;
    std::unordered_map<std::string, std::unique_ptr<Gate>> gates_; // by transport + '\0' + queue
    // The local fallback: this host's deliveries in flight per concurrency
    // scope, and its GCRA cells per rate scope.
    std::unordered_map<std::string, int> local_busy_;
    std::unordered_map<std::string, double> local_tat_;
    asio::steady_timer renewal_;
    std::string lease_prefix_;
    uint64_t lease_seq_ = 0;
    bool adopting_ = false; // declaring a queue dead from a mark: not published again
};

} // namespace cqmgr::qmgr
