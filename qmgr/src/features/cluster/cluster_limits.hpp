// Limits shared across a cluster (cqmgr_cluster_concurrency_limits,
// cqmgr_rate_limits), on Redis when cqmgr_redis_server is set.
//
// The core is synchronous, Redis is not: the limits become a gate on each
// queue they cover (core::Limits::gate), the deliveries that may be in
// flight there, and what the gate admits is acquired ahead, asynchronously:
//   - a concurrency limit: leases taken from the cluster's lease set one at
//     a time while the queue has waiting mail and every lease it holds is
//     in use (never more than the limit on one host); a lease whose
//     delivery ended is kept for the next delivery while mail waits and
//     the queue may start one (not suspended, not dead), else given back,
//     either only 10 ms after the end (the receiver may still count the
//     closing connection); all are renewed every third of
//     cqmgr_cluster_lease_time, and expire if this host dies;
//   - a rate: one token at a time from the shared GCRA cell, asked for
//     when the queue has waiting mail and no token.  The cell books a start
//     up to a horizon ahead (cluster::gcra_booking_horizon_ms) and the token
//     comes when it is due, so the cell's rate is kept exactly however late
//     the next ask is; beyond the horizon, a refusal says when to ask again.
//
// The invariant: the deliveries in flight to a scope, on all hosts, never
// exceed its limit (as long as Redis is away for less than a lease time).
// A host counts a lease as valid for the lease time after the step that
// last renewed it was *sent*, never later than Redis's expiry of it.  Redis away (and at start,
// until it answers): a host goes on with the leases it holds, each until it expires, and asks for
// none (nobody can get them meanwhile).  Redis back (every connection that comes up, heard of or
// not): before any new lease is asked for, the host takes its leases again, those in use first,
// each only while the cluster holds fewer than the limit (a limit-checked renewal), and drops those
// it could not get; the scripts refuse new leases for a lease time when they find another Redis
// server than the last (a restart or a failover), so every lease of the lost state has been taken
// again or has expired first (see docs/design.md).  Only when Redis has been away for a whole lease
// time does each host apply the concurrency limit to itself alone, and the rate to a local GCRA
// cell (rates go local at once: a start is never waited for).
//
// A gate lives as long as its queue (made at its birth, gone when it is
// freed, whatever frees it: DeliveryObserver), and its leases go back
// with it.
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
//
// Providers' limits (cqmgr_provider_concurrency_limits,
// cqmgr_provider_rate_limits) are a second ClusterLimits with another
// Scoping: its keys are transport:provider, then provider, for a queue
// that is a provider's member (Providers), and its scopes are named
// "provider:KEY" in the shared state.  The two keep one gate per queue
// each; the core's gate is the smaller (combine_with()).  A queue whose
// membership changes after its birth is scoped again (rescope()): its
// gate goes, with its leases (after the linger), and a new one counts the
// deliveries it has in flight, so that it starts nothing more until the
// new scope has room for those as well.
//
// Without Redis, a scope's limit is kept on this host's own count; every
// start or end there re-applies the gates of all the scope's queues (a
// gate's room depends on its siblings' deliveries).  A queue no gate
// covers costs a look at one byte per delivery (gated_).
#pragma once

#include "cluster_gate.hpp"
#include "cluster_gate_view.hpp"
#include "cqmgr/cluster/gcra.hpp"
#include "cqmgr/cluster/redis_shared_state.hpp"
#include "cqmgr/conf/lookup_table.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "delivery_observer.hpp"
#include "provider_maps.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace cqmgr::qmgr {

class Providers;

class ClusterLimits : public DeliveryObserver {
  public:
    struct Tables {
        conf::LookupTables rates;
        conf::LookupTables concurrency;
        // The providers' (the second instance's) tables, and the maps that
        // make queues members (Providers).
        conf::LookupTables provider_rates;
        conf::LookupTables provider_concurrency;
        ProviderMaps provider_maps;

        // Tables with `rates` and `concurrency` only (the providers' limits'
        // instance).
        static Tables of(conf::LookupTables rates, conf::LookupTables concurrency) {
            Tables t;
            t.rates = std::move(rates);
            t.concurrency = std::move(concurrency);
            return t;
        }
    };
    // Reads the tables (before the jail); throws conf::ConfigError.
    static Tables open_tables(const conf::QmgrParams& params);

    // Which scopes cover a queue: by default the destination limits' keys
    // (transport:destination, destination, transport).
    struct Scoping {
        const char* concurrency_param = "cqmgr_cluster_concurrency_limits";
        const char* rate_param = "cqmgr_rate_limits";
        // The keys tried for queue `queue` of `transport`, in order (none:
        // no limit covers it); unset: the destination limits' keys.
        std::function<std::vector<std::string>(const std::string& transport,
                                               const std::string& queue)>
            keys;
        // Before a key, the scope's name in the shared state.
        std::string scope_prefix;
        // Shared dead marks (the destination limits only).
        bool dead_marks = true;
        // Learned limits narrow the tables' (set_learned()); active then.
        bool learned = false;
    };
    // The providers' scoping: members of a provider of `providers`, keyed
    // by transport:provider, then provider.
    static Scoping provider_scoping(const Providers* providers);

    // `tables`: the instance's rates and concurrency tables (the provider
    // ones are not read here).
    ClusterLimits(asio::io_context& io, const conf::QmgrParams& params, Tables tables,
                  core::Scheduler& sched, Scoping scoping);
    // The destination limits (the default Scoping).
    ClusterLimits(asio::io_context& io, const conf::QmgrParams& params, Tables tables,
                  core::Scheduler& sched);
    ~ClusterLimits();

    // True when some limit is configured (else nothing here does anything).
    bool active() const { return active_; }
    using GateView = ClusterGateView;
    // The gate of queue `q`, or nothing when no limit covers it (and no
    // dead mark is being read for it).
    std::optional<GateView> gate_view(const core::Queue& q) const;
    // How many queues have a gate (for tests).
    size_t gate_count() const { return gates_.size(); }
    // The other instance whose gate the core's is combined with (each
    // names the other): the core's gate is the smaller of the two.
    void combine_with(ClusterLimits* other) { partner_ = other; }
    // This instance's gate of queue `queue` of `transport`, if it has one.
    std::optional<int> own_gate(const std::string& transport, const std::string& queue);
    // The gate of queue `queue` of `transport` (gate_view()), by name.
    std::optional<GateView> view(const std::string& transport, const std::string& queue) const;
    // This host's deliveries in flight in concurrency scope `scope`, the
    // leases it holds there and in all (metrics), and whether Redis is up
    // (none: not used).
    int scope_busy(const std::string& scope) const;
    int scope_leases(const std::string& scope) const;
    int leases_held() const;
    std::optional<bool> redis_up() const;
    // A limit learned for the queues whose first key is `key` narrows their
    // gates made from now on (narrow_by_learned()); the caller rescope()s.
    void set_learned(const std::string& key, const core::LearnedLimit& limit);
    // Queue `q`'s scopes may have changed (its provider membership did):
    // its gate goes, with its leases, and a new one is made that counts
    // its deliveries in flight.  Not from inside a scheduler callback.
    void rescope(const core::Queue& q);
    // Connects to Redis, if configured (or to use_shared()'s state).
    void start();
    // Uses `shared` instead of cqmgr_redis_server's Redis (tests: a fake); before start().
    void use_shared(std::unique_ptr<cluster::SharedState> shared);
    // The shared state once started (nullptr: none), for the reply rules' actions.
    cluster::SharedState* shared() const { return shared_.get(); }

    // The gate of a new queue (Driver::queue_gate).
    std::optional<int> queue_gate(const core::Queue& q);
    // Queue `q` is being freed (Driver::queue_freed): its gate and leases go.
    void queue_freed(const core::Queue& q) override;
    // Asks for the leases and tokens that queues with waiting mail need,
    // and gives back those of queues that cannot start anything.
    void refresh();
    // A delivery to `q` started (after select_entry): true if a concurrency limit bounds it.
    bool started(const core::Queue& q);
    // A delivery to `transport`/`queue` ended (after delivery_done).
    void finished(const std::string& transport, const std::string& queue);
    // The process is about to exit: gives the leases not in use back at
    // once, over a blocking connection (within cqmgr_redis_timeout_ms a
    // step); those of deliveries still in flight expire by themselves.
    void release_at_exit();
    // Queue `q` was declared dead, or is back (Driver::queue_window).
    void queue_dead(const core::Queue& q);
    void queue_revived(const core::Queue& q);

    // DeliveryObserver: the calls above, on the queue manager's events.
    void queue_born(const core::Queue& q, std::optional<int>& gate) override {
        if (auto v = queue_gate(q); v && (!gate || *v < *gate)) gate = v;
    }
    void delivery_started(DeliveryEvent& ev) override {
        ev.no_session_store = started(*ev.entry->queue) || ev.no_session_store;
    }
    void delivery_ended(DeliveryEvent& ev) override;
    void delivery_reported(const DeliveryEvent& ev) override;
    void queue_window(const core::Queue& q, bool positive, QueueTurn turn) override;
    void before_selection(const WallClock&) override { refresh(); }

  private:
    struct Gate;
    struct Lease {
        std::string id;
        double valid_until = 0; // ms (steady clock): when it expires unless renewed
    };
    // Where this host stands with the shared state, for the leases.
    enum class Sync {
        away,    // no connection (or not yet heard of): the leases held count until they expire
        syncing, // connected: taking the leases held again, asking for no new one
        synced,  // leases may be asked for
    };
    // A lease id of a renewal, and whose it is.
    struct Renewing {
        std::string key;   // the gate's
        uint64_t gate = 0; // its number
        std::string id;
        bool fresh = false; // for a delivery in flight that holds no lease
    };

    Gate* gate_for(const std::string& key);
    // The same, only while it is gate number `id` (not one made since for
    // the same queue: rescope()).
    Gate* gate_for(const std::string& key, uint64_t id);
    // Makes the gate of queue `q` if some limit covers it (nullptr: none).
    Gate* make_gate(const core::Queue& q);
    // Narrows `g`'s limits by what was learned for its first key.
    void narrow_by_learned(Gate& g);
    // The values in `table` for `transport`/`queue`: the key that matched,
    // and the value.
    std::optional<std::pair<std::string, std::string>> lookup(const conf::LookupTables& table,
                                                              const std::string& transport,
                                                              const std::string& queue) const;
    // Whether queue slot `slot` may have a gate.
    bool gated(const core::Queue& q) const { return q.slot < gated_.size() && gated_[q.slot] != 0; }
    void set_gated(const core::Queue& q, bool on);
    // The core's gate for `g`'s queue: this instance's, narrowed by the
    // partner's.
    std::optional<int> combined(Gate& g);
    // Sets the core's gate of queue `transport`/`queue` that has no gate
    // here (the partner's, or none).
    void apply_none(const std::string& transport, const std::string& queue);
    // On this host's own count: every gate of concurrency scope `scope`
    // (their room changed with a start or end).
    void apply_scope(const std::string& scope);
    // The end of a delivery through gate `key`, once the scheduler has it.
    void finished(const std::string& key);
    // Erases gate `key`; its leases go back once the linger time is over.
    void drop_gate(const std::string& key);
    // Sets the core's gate of `g`'s queue from what `g` holds.
    void apply(Gate& g);
    void apply_all();
    // What `g` holds and has in flight, for the gate's arithmetic.
    GateCounts counts(const Gate& g) const;
    // The gate that what `g` holds allows.
    std::optional<int> gate_value(const Gate& g) const;
    // Whether leases are what counts now (else this host's own count).
    bool leases_count() const;
    // The leases of `g` that count now.
    int usable_leases(const Gate& g) const;
    void add_lease(Gate& g, Lease l);
    // Forgets lease `id` of `g` (false: it had none such).
    bool forget_lease(Gate& g, const std::string& id);
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
    // Asks for a lease again after `ms`.
    void retry_after(Gate& g, double ms);
    // Renews every lease held, scope by scope, in-use ones first (and takes
    // leases for deliveries in flight that hold none); with `sync`, as the
    // first step on a new connection.
    void renew_all(bool sync);
    void renewed(const std::string& scope, const std::vector<Renewing>& items,
                 const cluster::RenewAnswer& a, double sent, uint64_t epoch, bool sync);
    void arm_renewal();
    // The connection came up (or is up on one not synchronised with yet).
    void begin_sync();
    void sync_done();
    // The connection went away (or a step failed on it).
    void went_away();
    // Re-applies the gates when a held lease expires or the local limits
    // begin, while Redis is away.
    void arm_hold_timer();
    void hold_timer_fired();
    void state_changed(bool up);
    bool rate_shared() const { return shared_ && shared_->up(); }
    // Reads the dead mark of a queue just created; mark_read() acts on it
    // (the mark, or none when there is none or Redis did not answer).
    void read_dead_mark(const std::string& transport, const std::string& queue);
    void mark_read(const std::string& transport, const std::string& queue,
                   std::optional<cluster::DeadMark> m);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    Tables tables_;
    core::Scheduler& sched_;
    Scoping scoping_;
    ClusterLimits* partner_ = nullptr;
    uint64_t gate_seq_ = 0; // the last gate's number
    // By queue slot: whether the queue may have a gate (1), so that a
    // delivery elsewhere costs no lookup.
    std::vector<uint8_t> gated_;
    bool ending_gated_ = false;
    bool active_ = false;
    double lease_ms_ = 0; // cqmgr_cluster_lease_time
    std::unique_ptr<cluster::SharedState> shared_;
    std::unordered_map<std::string, std::unique_ptr<Gate>> gates_; // by transport + '\0' + queue
    // The gates of each concurrency scope (apply_scope()).
    std::unordered_map<std::string, std::vector<Gate*>> scope_gates_;
    // The local fallback: this host's deliveries in flight per concurrency
    // scope, and its GCRA cells per rate scope.
    std::unordered_map<std::string, int> local_busy_;
    std::unordered_map<std::string, double> local_tat_;
    // The leases this host holds per scope (every gate of it).
    std::unordered_map<std::string, int> scope_leases_;
    asio::steady_timer renewal_;
    asio::steady_timer hold_timer_;
    Sync sync_ = Sync::away;
    uint64_t conn_ = 0;     // the connection synchronised with (SharedState::connection)
    uint64_t epoch_ = 0;    // one more at each sync and loss: answers of another are stale
    int sync_pending_ = 0;  // renewals of the sync not yet answered
    double away_since_ = 0; // when the leases stopped being renewed (ms, steady clock)
    bool local_warned_ = false;
    std::string lease_prefix_;
    uint64_t lease_seq_ = 0;
    bool adopting_ = false; // declaring a queue dead from a mark: not published again
    std::unordered_map<std::string, core::LearnedLimit> learned_; // by first key
    // The gate key of the delivery whose end is being reported (kept for
    // its capacity: no allocation per delivery).
    std::string ending_;
};

} // namespace cqmgr::qmgr
