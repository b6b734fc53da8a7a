// Shared concurrency and rate limits as gates on queues (see
// cluster_limits.hpp).
#include "cluster_limits.hpp"

#include "cluster_limits_gate.hpp"
#include "cqmgr/cluster/redis_replies.hpp"
#include "log.hpp"
#include "providers.hpp"

#include <cmath>
#include <unistd.h>

namespace cqmgr::qmgr {

namespace {

std::optional<int> narrower(std::optional<int> a, std::optional<int> b) {
    if (!a) return b;
    if (!b) return a;
    return std::min(*a, *b);
}

} // namespace

using namespace cluster_gate;

ClusterLimits::ClusterLimits(asio::io_context& io, const conf::QmgrParams& params, Tables tables,
                             core::Scheduler& sched)
    : ClusterLimits(io, params, std::move(tables), sched, Scoping{}) {}

ClusterLimits::ClusterLimits(asio::io_context& io, const conf::QmgrParams& params, Tables tables,
                             core::Scheduler& sched, Scoping scoping)
    : io_(io), params_(params), tables_(std::move(tables)), sched_(sched),
      scoping_(std::move(scoping)), renewal_(io), hold_timer_(io) {
    active_ = !tables_.rates.empty() || !tables_.concurrency.empty() || scoping_.learned ||
              (scoping_.dead_marks && !params.cqmgr_redis_server.empty());
    lease_ms_ = static_cast<double>(params.cqmgr_cluster_lease_time) * 1000;
    lease_prefix_ = params.myhostname + "/" + std::to_string(::getpid()) + "/";
}

ClusterLimits::~ClusterLimits() {
    if (shared_) shared_->close();
}

void ClusterLimits::use_shared(std::unique_ptr<cluster::SharedState> shared) {
    shared_ = std::move(shared);
}

void ClusterLimits::start() {
    if (!shared_) {
        if (params_.cqmgr_redis_server.empty()) return;
        auto target = cluster::parse_redis_target(params_.cqmgr_redis_server);
        if (!target) {
            log::warn("cqmgr_redis_server: bad value \"" + params_.cqmgr_redis_server +
                      "\"; using local limits");
            return;
        }
        cluster::RedisOptions o;
        o.address = target->server;
        o.master_name = target->master_name;
        o.sentinels = target->sentinels;
        o.command_timeout = std::chrono::milliseconds(params_.cqmgr_redis_timeout_ms);
        auto client = cluster::RedisClient::create(io_.get_executor(), o,
                                                   [](bool warning, const std::string& line) {
                                                       if (warning)
                                                           log::warn(line);
                                                       else
                                                           log::info(line);
                                                   });
        shared_ =
            std::make_unique<cluster::RedisSharedState>(client, params_.cqmgr_redis_key_prefix);
    }
    // Until Redis has answered, this host holds no lease: it starts nothing
    // where a concurrency limit applies, for at most a lease time.
    away_since_ = steady_ms();
    shared_->start([this](bool up) { state_changed(up); });
    arm_renewal();
    arm_hold_timer();
}

std::optional<int> ClusterLimits::queue_gate(const core::Queue& q) {
    if (!active_) return std::nullopt;
    std::string key = gate_key(q.transport->name, q.name);
    if (Gate* g = gate_for(key)) {
        g->freed = false; // the same name again before the old gate's last end
        set_gated(q, true);
        return gate_value(*g);
    }
    Gate* g = make_gate(q);
    // Closed until the first lease or token is in hand (which, without
    // Redis, is at once: refresh() runs before the next selection).
    return g ? gate_value(*g) : std::nullopt;
}

ClusterLimits::Gate* ClusterLimits::make_gate(const core::Queue& q) {
    const std::string& transport = q.transport->name;
    std::string key = gate_key(transport, q.name);
    auto g = std::make_unique<Gate>();
    g->transport = transport;
    g->queue = q.name;
    // The value for this queue in `table`, parsed; a bad one is logged
    // and left out.  Sets `scope` to the key that matched.
    auto limit_of = [&](const char* param, const conf::LookupTables& table, auto parse,
                        std::string& scope) {
        auto found = lookup(table, transport, q.name);
        std::optional<std::decay_t<decltype(*parse(std::string_view{}))>> value;
        if (!found) return value;
        auto parsed = parse(found->second);
        if (parsed) {
            scope = scoping_.scope_prefix + found->first;
            value = std::move(*parsed);
        } else {
            log::warn(std::string(param) + ": " + found->first + ": " + parsed.error().message());
        }
        return value;
    };
    if (auto n = limit_of(scoping_.concurrency_param, tables_.concurrency,
                          &cluster::parse_concurrency, g->lease_scope))
        g->limit = *n;
    g->rate = limit_of(scoping_.rate_param, tables_.rates, &cluster::parse_rate, g->rate_scope);
    if (!learned_.empty() && scoping_.keys) narrow_by_learned(*g);
    // With Redis there, nothing starts before its dead mark is read (one
    // round trip, or the deadline).
    g->mark_pending = scoping_.dead_marks && rate_shared();
    if (g->mark_pending) read_dead_mark(transport, q.name);
    if (g->limit == 0 && !g->rate && !g->mark_pending) return nullptr;
    g->id = ++gate_seq_;
    g->retry = std::make_unique<asio::steady_timer>(io_);
    g->rate_timer = std::make_unique<asio::steady_timer>(io_);
    set_gated(q, true);
    Gate* made = gates_.emplace(key, std::move(g)).first->second.get();
    if (made->limit > 0) scope_gates_[made->lease_scope].push_back(made);
    return made;
}

void ClusterLimits::set_gated(const core::Queue& q, bool on) {
    if (q.slot >= gated_.size()) {
        if (!on) return;
        gated_.resize(q.slot + 1);
    }
    gated_[q.slot] = on ? 1 : 0;
}

void ClusterLimits::queue_freed(const core::Queue& q) {
    set_gated(q, false);
    if (gates_.empty()) return;
    std::string key = gate_key(q.transport->name, q.name);
    Gate* g = gate_for(key);
    if (!g) return;
    // The end of the delivery that empties it is being reported: finished()
    // follows at once and counts it first.
    if (g->busy > 0) {
        g->freed = true;
        return;
    }
    drop_gate(key);
}

ClusterLimits::Gate* ClusterLimits::gate_for(const std::string& key) {
    auto it = gates_.find(key);
    return it == gates_.end() ? nullptr : it->second.get();
}

ClusterLimits::Gate* ClusterLimits::gate_for(const std::string& key, uint64_t id) {
    Gate* g = gate_for(key);
    return g && g->id == id ? g : nullptr;
}

void ClusterLimits::drop_gate(const std::string& key) {
    auto it = gates_.find(key);
    if (it == gates_.end()) return;
    Gate& g = *it->second;
    if (!g.leases.empty()) {
        scope_leases_[g.lease_scope] -= static_cast<int>(g.leases.size());
        if (shared_) {
            // After the linger: a delivery that just ended may still count
            // at the receiver.
            std::vector<std::string> ids;
            for (const Lease& l : g.leases)
                ids.push_back(l.id);
            auto t =
                std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(linger_ms));
            t->async_wait([this, t, scope = g.lease_scope, ids](error_code) {
                for (const std::string& id : ids)
                    shared_->lease_release(scope, id);
            });
        }
    }
    if (g.limit > 0) {
        auto s = scope_gates_.find(g.lease_scope);
        if (s != scope_gates_.end()) {
            std::erase(s->second, &g);
            if (s->second.empty()) scope_gates_.erase(s);
        }
    }
    gates_.erase(it); // its timers' waits end as cancelled
}

void ClusterLimits::apply(Gate& g) {
    if (core::Queue* q = sched_.find_queue(g.transport, g.queue))
        sched_.set_limit(*q, core::LimitChange::gate(combined(g)));
}

std::optional<int> ClusterLimits::combined(Gate& g) {
    std::optional<int> v = gate_value(g);
    return partner_ ? narrower(v, partner_->own_gate(g.transport, g.queue)) : v;
}

void ClusterLimits::apply_none(const std::string& transport, const std::string& queue) {
    if (core::Queue* q = sched_.find_queue(transport, queue))
        sched_.set_limit(*q, core::LimitChange::gate(partner_ ? partner_->own_gate(transport, queue)
                                                              : std::nullopt));
}

void ClusterLimits::apply_scope(const std::string& scope) {
    auto it = scope_gates_.find(scope);
    if (it == scope_gates_.end()) return;
    for (Gate* g : it->second)
        apply(*g);
}

void ClusterLimits::apply_all() {
    for (auto& [key, g] : gates_)
        apply(*g);
}

std::optional<int> ClusterLimits::gate_value(const Gate& g) const {
    return gate_allowance(counts(g));
}

void ClusterLimits::refresh() {
    if (gates_.empty()) return;
    for (auto& [key, g] : gates_)
        want(*g);
}

void ClusterLimits::want(Gate& g) {
    core::Queue* q = sched_.find_queue(g.transport, g.queue);
    if (!q) return;
    if (!q->may_start()) {
        // Suspended, dead or pausing: a lease kept for its next delivery
        // would only keep every other host from the limit meanwhile.
        trim(g, q);
        return;
    }
    // Mail that could go now, were it not for the gate.
    int window = q->limits.cap && q->limits.cap->concurrency < q->window
                     ? q->limits.cap->concurrency
                     : q->window;
    bool waiting = q->selectable_count() > 0 && g.busy < window;
    if (!waiting) return;
    if (sync_ == Sync::synced && !g.lease_asking && !g.retry_armed &&
        lease_wanted(counts(g), window))
        ask_lease(g);
    if (g.rate && g.tokens == 0 && !g.rate_asking && !g.rate_waiting) ask_token(g);
    if (g.limit > 0 && !leases_count()) apply(g);
}

bool ClusterLimits::started(const core::Queue& q) {
    if (gates_.empty() || !gated(q)) return false;
    Gate* g = gate_for(gate_key(q.transport->name, q.name));
    if (!g) return false;
    g->busy++;
    if (g->limit > 0) local_busy_[g->lease_scope]++;
    if (g->tokens > 0) g->tokens--;
    // On this host's own count, the scope's other queues have less room.
    if (g->limit > 0 && !leases_count())
        apply_scope(g->lease_scope);
    else
        apply(*g);
    want(*g);
    return g->limit > 0;
}

void ClusterLimits::finished(const std::string& transport, const std::string& queue) {
    if (gates_.empty()) return;
    finished(gate_key(transport, queue));
}

void ClusterLimits::delivery_ended(DeliveryEvent& ev) {
    const core::Queue& q = *ev.entry->queue;
    ending_gated_ = gated(q);
    // Named before the scheduler hears of the end: it may free the queue.
    if (ending_gated_) ending_.assign(q.transport->name).append(1, '\0').append(q.name);
}

void ClusterLimits::delivery_reported(const DeliveryEvent&) {
    if (gates_.empty() || !ending_gated_) return;
    finished(ending_);
}

void ClusterLimits::queue_window(const core::Queue& q, bool, QueueTurn turn) {
    if (turn == QueueTurn::died)
        queue_dead(q);
    else if (turn == QueueTurn::revived)
        queue_revived(q);
}

void ClusterLimits::finished(const std::string& key) {
    Gate* g = gate_for(key);
    if (!g) return;
    g->busy--;
    core::Queue* q = sched_.find_queue(g->transport, g->queue);
    if (!q || g->freed) {
        // The queue is gone (nothing left for it): so is its gate.
        std::string scope = g->limit > 0 ? g->lease_scope : std::string();
        if (!scope.empty()) local_busy_[scope]--;
        if (g->busy == 0) drop_gate(key);
        if (!scope.empty() && !leases_count()) apply_scope(scope);
        return;
    }
    if (g->limit > 0) {
        // The slot stays taken a little longer (see linger_ms).
        g->closing++;
        auto t = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(linger_ms));
        t->async_wait([this, t, key, id = g->id, scope = g->lease_scope](error_code) {
            local_busy_[scope]--;
            Gate* g = gate_for(key, id);
            if (!g) {
                // Scoped again meanwhile: its old scope's queues have room.
                if (!leases_count()) apply_scope(scope);
                return;
            }
            g->closing--;
            settle(*g);
            if (!leases_count()) apply_scope(scope);
        });
        // The gate follows at once all the same: it also counts the rate's
        // starts, which the delivery's end must not give back.
        apply(*g);
        want(*g);
        return;
    }
    settle(*g);
}

void ClusterLimits::settle(Gate& g) {
    if (core::Queue* q = sched_.find_queue(g.transport, g.queue)) trim(g, q);
    apply(g);
    want(g);
}

} // namespace cqmgr::qmgr
