// Shared concurrency and rate limits as gates on queues (see
// cluster_limits.hpp).
#include "cluster_limits.hpp"

#include "cqmgr/cluster/redis_replies.hpp"
#include "log.hpp"

#include <cmath>
#include <unistd.h>

namespace cqmgr::qmgr {

struct ClusterLimits::Gate {
    std::string transport, queue;
    // Concurrency: the scope, the cluster-wide limit, the leases held.
    std::string lease_scope;
    int limit = 0;
    std::vector<Lease> leases;
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
    // Its queue was freed while a delivery's end was being reported: the
    // gate goes at finished().
    bool freed = false;
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

// A wait a timer can hold and Redis could mean: else the answer is taken
// as none at all.
bool sane_wait(double ms) {
    return std::isfinite(ms) && ms >= 0 && ms <= cluster::max_reply_wait_ms;
}

std::chrono::microseconds micros(double ms) {
    return std::chrono::microseconds(static_cast<int64_t>(ms * 1000));
}

} // namespace

ClusterLimits::Tables ClusterLimits::open_tables(const conf::QmgrParams& params) {
    return {conf::LookupTables::open(params.cqmgr_rate_limits),
            conf::LookupTables::open(params.cqmgr_cluster_concurrency_limits)};
}

ClusterLimits::ClusterLimits(asio::io_context& io, const conf::QmgrParams& params, Tables tables,
                             core::Scheduler& sched)
    : io_(io), params_(params), tables_(std::move(tables)), sched_(sched), renewal_(io),
      hold_timer_(io) {
    active_ = !tables_.rates.empty() || !tables_.concurrency.empty() ||
              !params.cqmgr_redis_server.empty();
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
    const std::string& transport = q.transport->name;
    std::string key = gate_key(transport, q.name);
    if (Gate* g = gate_for(key)) {
        g->freed = false; // the same name again before the old gate's last end
        return gate_value(*g);
    }
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
            scope = found->first;
            value = std::move(*parsed);
        } else {
            log::warn(std::string(param) + ": " + found->first + ": " + parsed.error().message());
        }
        return value;
    };
    if (auto n = limit_of("cqmgr_cluster_concurrency_limits", tables_.concurrency,
                          &cluster::parse_concurrency, g->lease_scope))
        g->limit = *n;
    g->rate = limit_of("cqmgr_rate_limits", tables_.rates, &cluster::parse_rate, g->rate_scope);
    // With Redis there, nothing starts before its dead mark is read (one
    // round trip, or the deadline).
    g->mark_pending = rate_shared();
    if (g->mark_pending) read_dead_mark(transport, q.name);
    if (g->limit == 0 && !g->rate && !g->mark_pending) return std::nullopt;
    g->retry = std::make_unique<asio::steady_timer>(io_);
    g->rate_timer = std::make_unique<asio::steady_timer>(io_);
    // Closed until the first lease or token is in hand (which, without
    // Redis, is at once: refresh() runs before the next selection).
    return gate_value(*gates_.emplace(key, std::move(g)).first->second);
}

void ClusterLimits::queue_freed(const core::Queue& q) {
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
    gates_.erase(it); // its timers' waits end as cancelled
}

void ClusterLimits::apply(Gate& g) {
    if (core::Queue* q = sched_.find_queue(g.transport, g.queue))
        sched_.set_limit(*q, core::LimitChange::gate(gate_value(g)));
}

void ClusterLimits::apply_all() {
    for (auto& [key, g] : gates_)
        apply(*g);
}

bool ClusterLimits::leases_count() const {
    if (!shared_) return false;
    return sync_ == Sync::synced || steady_ms() < away_since_ + lease_ms_;
}

int ClusterLimits::usable_leases(const Gate& g) const {
    if (sync_ == Sync::synced) return static_cast<int>(g.leases.size());
    double now = steady_ms();
    return static_cast<int>(std::count_if(g.leases.begin(), g.leases.end(),
                                          [now](const Lease& l) { return l.valid_until > now; }));
}

void ClusterLimits::add_lease(Gate& g, Lease l) {
    g.leases.push_back(std::move(l));
    scope_leases_[g.lease_scope]++;
}

bool ClusterLimits::forget_lease(Gate& g, const std::string& id) {
    auto it =
        std::find_if(g.leases.begin(), g.leases.end(), [&](const Lease& l) { return l.id == id; });
    if (it == g.leases.end()) return false;
    g.leases.erase(it);
    scope_leases_[g.lease_scope]--;
    return true;
}

GateCounts ClusterLimits::counts(Gate& g) {
    GateCounts c;
    c.mark_pending = g.mark_pending;
    c.limit = g.limit;
    c.shared = leases_count();
    c.leases = usable_leases(g);
    c.busy = g.busy;
    c.closing = g.closing;
    if (g.limit > 0) {
        c.scope_busy = local_busy_[g.lease_scope];
        c.scope_leases = scope_leases_[g.lease_scope];
    }
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

void ClusterLimits::ask_lease(Gate& g) {
    g.lease_asking = true;
    std::string id = lease_prefix_ + std::to_string(++lease_seq_);
    std::string key = gate_key(g.transport, g.queue);
    std::string scope = g.lease_scope;
    const double sent = steady_ms();
    const uint64_t epoch = epoch_;
    shared_->lease_acquire(
        scope, id, g.limit, static_cast<int64_t>(lease_ms_),
        [this, key, id, scope, sent, epoch](const cluster::LeaseAnswer& a) {
            Gate* g = gate_for(key);
            if (g) g->lease_asking = false;
            // Granted by a connection since lost (the leases held have been
            // taken again on the new one without it), or for a queue that
            // is gone: given back unused.
            if (a.granted && (!g || g->freed || epoch != epoch_)) {
                shared_->lease_release(scope, id);
                if (g) want(*g);
                return;
            }
            if (!g) return;
            if (a.granted) {
                add_lease(*g, {id, sent + lease_ms_});
                apply(*g);
                want(*g);
            } else if (a.failed) {
                if (epoch == epoch_) went_away();
                apply(*g);
            } else {
                // Full (a lease given back elsewhere is not announced), or no
                // new lease yet after Redis lost its state: look again then.
                double fence = sane_wait(a.retry_after_ms) ? a.retry_after_ms : 0;
                retry_after(*g, fence + 50 + static_cast<double>(lease_seq_ % 50));
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
    if (!rate_shared()) {
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
                           // A wait no timer can hold is no answer either.
                           if (a.failed || !sane_wait(a.allowed ? a.wait_ms : a.retry_after_ms)) {
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
    g.rate_timer->expires_after(micros(std::max(ms, granted ? 0.0 : 1.0)));
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
    g.retry->expires_after(micros(std::max(ms, 1.0)));
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
    if (!q || g->freed) {
        // The queue is gone (nothing left for it): so is its gate.
        if (g->limit > 0) local_busy_[g->lease_scope]--;
        if (g->busy == 0) drop_gate(key);
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
    // Keep a lease for each delivery in flight and, while mail waits that
    // may go, one for the next one.
    bool waiting = q->may_start() && q->selectable_count() > 0;
    auto keep = static_cast<size_t>(leases_to_keep(counts(g), waiting));
    while (g.leases.size() > keep) {
        shared_->lease_release(g.lease_scope, g.leases.back().id);
        forget_lease(g, g.leases.back().id);
    }
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
                sched_.set_limit(*q, core::LimitChange::gate(std::nullopt));
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
    if (adopting_ || !rate_shared() || !q.dsn) return;
    int64_t ms = std::max<int64_t>(q.timer_due - sched_.now(), 1) * 1000;
    shared_->dead_set(q.transport->name, q.name, {q.dsn->status, q.dsn->reason, 0}, ms);
}

void ClusterLimits::queue_revived(const core::Queue& q) {
    if (rate_shared()) shared_->dead_clear(q.transport->name, q.name);
}

void ClusterLimits::release_at_exit() {
    if (!shared_) return;
    // Only the spare ones: a lease whose delivery is still in flight (its
    // agent goes on without us) stays until it expires, so that the next
    // queue manager cannot exceed the cluster's count meanwhile.
    cluster::SharedState::Leases leases;
    for (auto& [key, g] : gates_)
        for (size_t i = static_cast<size_t>(std::max(g->busy, 0)); i < g->leases.size(); i++)
            leases.emplace_back(g->lease_scope, g->leases[i].id);
    shared_->release_blocking(leases);
}

void ClusterLimits::arm_renewal() {
    auto every = std::chrono::milliseconds(params_.cqmgr_cluster_lease_time * 1000 / 3);
    renewal_.expires_after(every);
    renewal_.async_wait([this](error_code ec) {
        if (ec) return;
        if (sync_ == Sync::synced)
            renew_all(false);
        else if (sync_ == Sync::away && shared_->up())
            begin_sync(); // up without our hearing of it, or a sync that failed
        arm_renewal();
    });
}

void ClusterLimits::renew_all(bool sync) {
    // Per scope: the leases of deliveries in flight (or closing) first, so
    // that when the limit leaves no room for all, the spare ones are lost.
    struct Lists {
        int limit = 0;
        std::vector<Renewing> in_use, spare;
    };
    std::map<std::string, Lists> by_scope;
    for (auto& [key, g] : gates_) {
        if (g->limit == 0) continue;
        Lists& l = by_scope[g->lease_scope];
        l.limit = std::max(l.limit, g->limit);
        size_t in_use = static_cast<size_t>(std::max(g->busy + g->closing, 0));
        for (size_t i = 0; i < g->leases.size(); i++)
            (i < in_use ? l.in_use : l.spare).push_back({key, g->leases[i].id, false});
        // Deliveries started on local limits (Redis away for a lease time)
        // hold no lease: the cluster is told of them as well, up to its limit.
        for (size_t i = g->leases.size(); i < in_use; i++)
            l.in_use.push_back({key, lease_prefix_ + std::to_string(++lease_seq_), true});
    }
    std::erase_if(by_scope, [](const auto& kv) {
        return kv.second.in_use.empty() && kv.second.spare.empty();
    });
    if (sync) sync_pending_ = static_cast<int>(by_scope.size());
    const double sent = steady_ms();
    const uint64_t epoch = epoch_;
    for (auto& [scope, l] : by_scope) {
        std::vector<Renewing> items = std::move(l.in_use);
        items.insert(items.end(), l.spare.begin(), l.spare.end());
        std::vector<std::string> ids;
        for (const Renewing& r : items)
            ids.push_back(r.id);
        shared_->lease_renew(
            scope, ids, l.limit, static_cast<int64_t>(lease_ms_),
            [this, scope, items, sent, epoch, sync](const cluster::RenewAnswer& a) {
                renewed(scope, items, a, sent, epoch, sync);
            });
    }
    if (sync && by_scope.empty()) sync_done();
}

void ClusterLimits::renewed(const std::string& scope, const std::vector<Renewing>& items,
                            const cluster::RenewAnswer& a, double sent, uint64_t epoch, bool sync) {
    // An answer from a connection since lost says nothing of the new one.
    if (epoch != epoch_) return;
    if (a.failed) {
        went_away(); // the next connection syncs again
        return;
    }
    for (size_t i = 0; i < items.size(); i++) {
        const Renewing& r = items[i];
        Gate* g = gate_for(r.key);
        if (!a.kept[i]) {
            // Lost (it expired, or Redis forgot it and the limit is reached):
            // not held any more.
            if (g && !r.fresh) forget_lease(*g, r.id);
            continue;
        }
        if (r.fresh) {
            // Taken for a delivery in flight: kept while one still needs it.
            if (g && static_cast<int>(g->leases.size()) < g->busy + g->closing)
                add_lease(*g, {r.id, sent + lease_ms_});
            else
                shared_->lease_release(scope, r.id);
            continue;
        }
        if (!g) continue; // given back meanwhile (after this renewal: it is gone)
        for (Lease& l : g->leases)
            if (l.id == r.id) l.valid_until = sent + lease_ms_;
    }
    if (sync && --sync_pending_ == 0) {
        sync_done();
        return;
    }
    for (auto& [key, g] : gates_)
        if (g->lease_scope == scope) settle(*g);
}

void ClusterLimits::begin_sync() {
    if (sync_ == Sync::synced) went_away();
    sync_ = Sync::syncing;
    conn_ = shared_->connection();
    epoch_++;
    hold_timer_.cancel();
    // No new lease is asked for until every lease held is taken again (or
    // known lost): the renewals go first on the new connection.
    renew_all(true);
}

void ClusterLimits::sync_done() {
    sync_ = Sync::synced;
    local_warned_ = false;
    hold_timer_.cancel();
    for (auto& [key, g] : gates_)
        settle(*g);
}

void ClusterLimits::went_away() {
    if (sync_ == Sync::away) return;
    // The leases were last renewed on this connection: they count for a
    // lease time from then.  (A sync that never finished leaves the outage
    // as it began.)
    if (sync_ == Sync::synced) away_since_ = steady_ms();
    sync_ = Sync::away;
    epoch_++;
    arm_hold_timer();
    apply_all();
}

void ClusterLimits::arm_hold_timer() {
    if (!shared_ || sync_ == Sync::synced) return;
    double now = steady_ms(), next = away_since_ + lease_ms_;
    if (next <= now) {
        next = std::numeric_limits<double>::infinity();
        if (!local_warned_ && sync_ == Sync::away && !tables_.concurrency.empty()) {
            local_warned_ = true;
            log::warn("cluster limits: no shared state for " +
                      std::to_string(static_cast<int64_t>(std::round(lease_ms_ / 1000))) +
                      " s (cqmgr_cluster_lease_time): this host keeps the concurrency limits "
                      "alone until Redis is back");
        }
    }
    for (auto& [key, g] : gates_)
        for (const Lease& l : g->leases)
            if (l.valid_until > now) next = std::min(next, l.valid_until);
    if (!std::isfinite(next)) return;
    hold_timer_.expires_after(micros(next - now + 1));
    hold_timer_.async_wait([this](error_code ec) {
        if (!ec) hold_timer_fired();
    });
}

void ClusterLimits::hold_timer_fired() {
    if (sync_ == Sync::synced) return;
    // Leases whose time is up are gone from Redis as well: forgotten.
    double now = steady_ms();
    for (auto& [key, g] : gates_)
        for (size_t i = g->leases.size(); i-- > 0;)
            if (g->leases[i].valid_until <= now) forget_lease(*g, g->leases[i].id);
    apply_all();
    arm_hold_timer();
}

void ClusterLimits::state_changed(bool up) {
    if (!up) {
        went_away();
        return;
    }
    // Back: the cluster learns again what this host holds (a restarted
    // Redis has forgotten it, a new master may not have seen it), and only
    // then may new leases be asked for.
    if (!shared_->up()) return;
    if (sync_ != Sync::away && shared_->connection() == conn_) return; // heard of already
    begin_sync();
}

} // namespace cqmgr::qmgr
