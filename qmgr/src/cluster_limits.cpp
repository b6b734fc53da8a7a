// Shared concurrency and rate limits as gates on queues (see
// cluster_limits.hpp).
#include "cluster_limits.hpp"

#include "log.hpp"

#include <unistd.h>

namespace cqmgr::qmgr {

struct ClusterLimits::Gate {
    std::string transport, queue;
    // Concurrency: the scope, the cluster-wide limit, the leases held.
    std::string lease_scope;
    int limit = 0;
    std::vector<std::string> leases;
    bool lease_asking = false;
    // Rate: the scope, the spec, the token held (0 or 1).
    std::string rate_scope;
    std::optional<cluster::RateSpec> rate;
    int tokens = 0;
    bool rate_asking = false;
    // Waiting for a booked start to come due (the token then), or to ask
    // again after a refusal.
    bool rate_waiting = false;
    std::unique_ptr<asio::steady_timer> rate_timer;
    // This host's deliveries in flight through the gate, and those ended
    // less than linger_ms ago (their connections may still count at the
    // receiver).
    int busy = 0;
    int closing = 0;
    // Its dead mark is being read: nothing may start yet.
    bool mark_pending = false;
    // Asking for a lease again (the cluster's count was full).
    std::unique_ptr<asio::steady_timer> retry;
    bool retry_armed = false;
};

namespace {

// How long the slot of a delivery that ended stays taken: the agent has
// closed its connection, but the receiver counts it until its server
// process has noticed, and a new connection in that moment (this host
// reusing the lease, or another host taking it) can be one too many.  At
// the shared count of 5 and about 300 deliveries a second, the receiver
// counted 6 once in 3,000 without it.
constexpr int linger_ms = 10;

std::string gate_key(const std::string& transport, const std::string& queue) {
    return transport + '\0' + queue;
}

// The first key of transport:queue, queue, transport that `t` has, and its
// value.
std::optional<std::pair<std::string, std::string>>
lookup(const conf::LookupTables& t, const std::string& transport, const std::string& queue) {
    if (t.empty()) return std::nullopt;
    for (const std::string& key : {transport + ":" + queue, queue, transport})
        if (auto v = t.find(key)) return std::make_pair(key, *v);
    return std::nullopt;
}

double steady_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

ClusterLimits::Tables ClusterLimits::open_tables(const conf::QmgrParams& params) {
    return {conf::LookupTables::open(params.cqmgr_rate_limits),
            conf::LookupTables::open(params.cqmgr_cluster_concurrency_limits)};
}

ClusterLimits::ClusterLimits(asio::io_context& io, const conf::QmgrParams& params, Tables tables,
                             core::Scheduler& sched)
    : io_(io), params_(params), tables_(std::move(tables)), sched_(sched), renewal_(io) {
    active_ = !tables_.rates.empty() || !tables_.concurrency.empty() ||
              !params.cqmgr_redis_server.empty();
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
        auto address = cluster::parse_redis_address(params_.cqmgr_redis_server);
        if (!address) {
            log::warn("cqmgr_redis_server: bad value \"" + params_.cqmgr_redis_server +
                      "\"; using local limits");
            return;
        }
        cluster::RedisOptions o;
        o.address = *address;
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
    shared_->start([this](bool up) { state_changed(up); });
    arm_renewal();
}

std::optional<int> ClusterLimits::queue_gate(const core::Queue& q) {
    if (!active_) return std::nullopt;
    const std::string& transport = q.transport->name;
    std::string key = gate_key(transport, q.name);
    if (Gate* g = gate_for(key)) return gate_value(*g);
    auto g = std::make_unique<Gate>();
    g->transport = transport;
    g->queue = q.name;
    // The value for this queue in `table`, parsed; a bad one is logged
    // and left out.  Sets `scope` to the key that matched.
    auto limit_of = [&](const char* param, const conf::LookupTables& table, auto parse,
                        std::string& scope) {
        auto found = lookup(table, transport, q.name);
        decltype(parse(std::string_view{}, nullptr)) value;
        if (!found) return value;
        std::string error;
        value = parse(found->second, &error);
        if (value)
            scope = found->first;
        else
            log::warn(std::string(param) + ": " + found->first + ": " + error);
        return value;
    };
    if (auto n = limit_of("cqmgr_cluster_concurrency_limits", tables_.concurrency,
                          &cluster::parse_concurrency, g->lease_scope))
        g->limit = *n;
    g->rate = limit_of("cqmgr_rate_limits", tables_.rates, &cluster::parse_rate, g->rate_scope);
    // With Redis there, nothing starts before its dead mark is read (one
    // round trip, or the deadline).
    g->mark_pending = shared();
    if (g->mark_pending) read_dead_mark(transport, q.name);
    if (g->limit == 0 && !g->rate && !g->mark_pending) return std::nullopt;
    g->retry = std::make_unique<asio::steady_timer>(io_);
    g->rate_timer = std::make_unique<asio::steady_timer>(io_);
    // Closed until the first lease or token is in hand (which, without
    // Redis, is at once: refresh() runs before the next selection).
    return gate_value(*gates_.emplace(key, std::move(g)).first->second);
}

ClusterLimits::Gate* ClusterLimits::gate_for(const std::string& key) {
    auto it = gates_.find(key);
    return it == gates_.end() ? nullptr : it->second.get();
}

void ClusterLimits::apply(Gate& g) {
    if (core::Queue* q = sched_.find_queue(g.transport, g.queue))
        sched_.gate_set(*q, gate_value(g));
}

GateCounts ClusterLimits::counts(Gate& g) {
    GateCounts c;
    c.mark_pending = g.mark_pending;
    c.limit = g.limit;
    c.shared = shared();
    c.leases = static_cast<int>(g.leases.size());
    c.busy = g.busy;
    c.closing = g.closing;
    if (g.limit > 0) c.scope_busy = local_busy_[g.lease_scope];
    c.rate = g.rate.has_value();
    c.tokens = g.tokens;
    return c;
}

std::optional<int> ClusterLimits::gate_value(Gate& g) {
    return gate_allowance(counts(g));
}

void ClusterLimits::refresh() {
    if (gates_.empty()) return;
    for (auto& [key, g] : gates_)
        want(*g);
}

void ClusterLimits::want(Gate& g) {
    core::Queue* q = sched_.find_queue(g.transport, g.queue);
    if (!q || !q->ready() || q->hold) return;
    // Mail that could go now, were it not for the gate.
    int window = q->cap && q->cap->concurrency < q->window ? q->cap->concurrency : q->window;
    bool waiting = q->selectable_count() > 0 && g.busy < window;
    if (!waiting) return;
    if (!g.lease_asking && !g.retry_armed && lease_wanted(counts(g), window)) ask_lease(g);
    if (g.rate && g.tokens == 0 && !g.rate_asking && !g.rate_waiting) ask_token(g);
    if (g.limit > 0 && !shared()) apply(g);
}

void ClusterLimits::ask_lease(Gate& g) {
    g.lease_asking = true;
    std::string id = lease_prefix_ + std::to_string(++lease_seq_);
    std::string key = gate_key(g.transport, g.queue);
    std::string scope = g.lease_scope;
    shared_->lease_acquire(scope, id, g.limit, params_.cqmgr_cluster_lease_time * 1000,
                           [this, key, id, scope](const cluster::LeaseAnswer& a) {
                               Gate* g = gate_for(key);
                               if (!g) {
                                   if (a.granted) shared_->lease_release(scope, id);
                                   return;
                               }
                               g->lease_asking = false;
                               if (a.granted) {
                                   g->leases.push_back(id);
                                   apply(*g);
                                   want(*g);
                               } else if (a.failed) {
                                   apply(*g); // local limits while Redis is away
                               } else {
                                   // Full: look again soon (a lease given back elsewhere is
                                   // not announced).
                                   retry_after(*g, 50 + static_cast<double>(lease_seq_ % 50));
                               }
                           });
}

void ClusterLimits::ask_token(Gate& g) {
    std::string key = gate_key(g.transport, g.queue);
    const double horizon = cluster::gcra_booking_horizon_ms(*g.rate);
    auto local = [this, horizon](Gate& g) {
        auto r = cluster::gcra_take(local_tat_[g.rate_scope], steady_ms(), *g.rate, horizon);
        token_answer(g, r.allowed, r.allowed ? r.wait_ms : r.retry_after_ms);
    };
    if (!shared()) {
        local(g);
        return;
    }
    g.rate_asking = true;
    // This host's own cell (its last start, shared or local) is where the
    // shared one is at least: no burst when Redis comes back without it.
    // Less a millisecond, for the round trips' jitter: at the steady rate
    // the shared cell is there anyway, and a floor that came out a little
    // late would delay every start of a host that sends alone.
    const double sent = steady_ms();
    const double own = local_tat_[g.rate_scope] - sent - 1;
    shared_->rate_take(g.rate_scope, *g.rate, horizon, own,
                       [this, key, local, sent](const cluster::RateAnswer& a) {
                           Gate* g = gate_for(key);
                           if (!g) return;
                           g->rate_asking = false;
                           if (a.failed) {
                               local(*g);
                               return;
                           }
                           if (a.allowed) {
                               // The local cell goes on from this start, should Redis go
                               // away before the next one: no burst at either switch.
                               double& tat = local_tat_[g->rate_scope];
                               // (Counted from when the question left: Redis's `now` was
                               // no earlier, so this is never later than the shared cell.)
                               tat = std::max(tat, sent + a.wait_ms + g->rate->interval_ms());
                           }
                           token_answer(*g, a.allowed, a.allowed ? a.wait_ms : a.retry_after_ms);
                       });
}

void ClusterLimits::token_answer(Gate& g, bool granted, double ms) {
    if (granted && ms <= 0) {
        g.tokens = 1;
        apply(g);
        return;
    }
    // Booked (the token comes when the start is due) or refused (ask again
    // then).
    g.rate_waiting = true;
    g.rate_timer->expires_after(
        std::chrono::microseconds(static_cast<int64_t>(std::max(ms, granted ? 0.0 : 1.0) * 1000)));
    std::string key = gate_key(g.transport, g.queue);
    g.rate_timer->async_wait([this, key, granted](error_code ec) {
        if (ec) return;
        Gate* g = gate_for(key);
        if (!g) return;
        g->rate_waiting = false;
        if (granted) {
            g->tokens = 1;
            apply(*g);
        }
        want(*g);
    });
}

void ClusterLimits::retry_after(Gate& g, double ms) {
    g.retry_armed = true;
    g.retry->expires_after(
        std::chrono::microseconds(static_cast<int64_t>(std::max(ms, 1.0) * 1000)));
    std::string key = gate_key(g.transport, g.queue);
    g.retry->async_wait([this, key](error_code ec) {
        if (ec) return;
        if (Gate* g = gate_for(key)) {
            g->retry_armed = false;
            want(*g);
        }
    });
}

void ClusterLimits::started(const core::Queue& q) {
    if (gates_.empty()) return;
    Gate* g = gate_for(gate_key(q.transport->name, q.name));
    if (!g) return;
    g->busy++;
    if (g->limit > 0) local_busy_[g->lease_scope]++;
    if (g->tokens > 0) g->tokens--;
    apply(*g);
    want(*g);
}

void ClusterLimits::finished(const std::string& transport, const std::string& queue) {
    if (gates_.empty()) return;
    std::string key = gate_key(transport, queue);
    Gate* g = gate_for(key);
    if (!g) return;
    g->busy--;
    core::Queue* q = sched_.find_queue(transport, queue);
    if (!q) {
        // The queue is gone (nothing left for it): so is its gate.
        if (g->limit > 0) local_busy_[g->lease_scope]--;
        release_all(*g);
        gates_.erase(key);
        return;
    }
    if (g->limit > 0) {
        // The slot stays taken a little longer (see linger_ms).
        g->closing++;
        auto t = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(linger_ms));
        t->async_wait([this, t, key, scope = g->lease_scope](error_code) {
            local_busy_[scope]--;
            Gate* g = gate_for(key);
            if (!g) return;
            g->closing--;
            settle(*g);
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

void ClusterLimits::trim(Gate& g, const core::Queue* q) {
    if (!shared_ || g.leases.empty()) return;
    // Keep a lease for each delivery in flight and, while mail waits, one
    // for the next one.
    auto keep = static_cast<size_t>(leases_to_keep(counts(g), q->selectable_count() > 0));
    while (g.leases.size() > keep) {
        shared_->lease_release(g.lease_scope, g.leases.back());
        g.leases.pop_back();
    }
}

void ClusterLimits::release_all(Gate& g) {
    if (shared_)
        for (const std::string& id : g.leases)
            shared_->lease_release(g.lease_scope, id);
    g.leases.clear();
}

void ClusterLimits::read_dead_mark(const std::string& transport, const std::string& queue) {
    shared_->dead_get(transport, queue,
                      [this, transport, queue](bool failed, std::optional<cluster::DeadMark> m) {
                          mark_read(transport, queue, failed ? std::nullopt : std::move(m));
                      });
}

void ClusterLimits::mark_read(const std::string& transport, const std::string& queue,
                              std::optional<cluster::DeadMark> m) {
    std::string key = gate_key(transport, queue);
    if (Gate* g = gate_for(key); g && g->mark_pending) {
        g->mark_pending = false;
        if (g->limit == 0 && !g->rate) {
            // The gate was there for the mark only.
            gates_.erase(key);
            if (core::Queue* q = sched_.find_queue(transport, queue))
                sched_.gate_set(*q, std::nullopt);
        } else {
            apply(*g);
        }
    }
    if (!m) return;
    core::Queue* q = sched_.find_queue(transport, queue);
    if (!q || !q->ready() || q->dsn) return;
    int64_t secs = (m->remaining_ms + 999) / 1000;
    log::info("shared dead mark: " + transport + ":" + queue + ": " + m->status + " " + m->reason +
              " (for " + std::to_string(secs) + " s)");
    adopting_ = true;
    sched_.queue_mark_dead(*q, core::Dsn{m->status, m->reason}, sched_.now() + secs);
    adopting_ = false;
}

void ClusterLimits::queue_dead(const core::Queue& q) {
    if (adopting_ || !shared() || !q.dsn) return;
    int64_t ms = std::max<int64_t>(q.timer_due - sched_.now(), 1) * 1000;
    shared_->dead_set(q.transport->name, q.name, {q.dsn->status, q.dsn->reason, 0}, ms);
}

void ClusterLimits::queue_revived(const core::Queue& q) {
    if (shared()) shared_->dead_clear(q.transport->name, q.name);
}

void ClusterLimits::release_at_exit() {
    if (!shared_) return;
    // Only the spare ones: a lease whose delivery is still in flight (its
    // agent goes on without us) stays until it expires, so that the next
    // queue manager cannot exceed the cluster's count meanwhile.
    cluster::SharedState::Leases leases;
    for (auto& [key, g] : gates_)
        for (size_t i = static_cast<size_t>(std::max(g->busy, 0)); i < g->leases.size(); i++)
            leases.emplace_back(g->lease_scope, g->leases[i]);
    shared_->release_blocking(leases);
}

void ClusterLimits::arm_renewal() {
    auto every = std::chrono::milliseconds(params_.cqmgr_cluster_lease_time * 1000 / 3);
    renewal_.expires_after(every);
    renewal_.async_wait([this](error_code ec) {
        if (ec) return;
        renew_all();
        arm_renewal();
    });
}

void ClusterLimits::renew_all() {
    if (!shared()) return;
    std::unordered_map<std::string, std::vector<std::string>> by_scope;
    for (auto& [key, g] : gates_)
        by_scope[g->lease_scope].insert(by_scope[g->lease_scope].end(), g->leases.begin(),
                                        g->leases.end());
    for (auto& [scope, ids] : by_scope)
        if (!ids.empty()) shared_->lease_renew(scope, ids, params_.cqmgr_cluster_lease_time * 1000);
}

void ClusterLimits::state_changed(bool up) {
    // Back: the cluster learns again what this host holds (a restarted
    // Redis has forgotten it).  Away: every gate opens to the local limits.
    if (up) renew_all();
    // Deliveries started on local limits hold no lease: back on Redis, a
    // gate stays at the leases held until enough of them have ended.
    for (auto& [key, g] : gates_) {
        apply(*g);
        want(*g);
    }
}

} // namespace cqmgr::qmgr
