#include "provider_gates.hpp"

#include "cluster_gate.hpp"
#include "cqmgr/cluster/gcra.hpp"

#include <cmath>

namespace cqmgr::sim {

namespace {

constexpr double never = std::numeric_limits<double>::infinity();

std::string queue_key(const std::string& transport, const std::string& name) {
    return transport + '\0' + name;
}

} // namespace

ProviderGates::ProviderGates(conf::LookupTables concurrency, conf::LookupTables rates,
                             ProviderOf provider_of, Warn warn)
    : concurrency_(std::move(concurrency)), rates_(std::move(rates)),
      provider_of_(std::move(provider_of)), warn_(std::move(warn)) {}

ProviderGates::Scope* ProviderGates::scope_of(const std::string& transport,
                                              const std::string& name) {
    std::string provider = provider_of_(name);
    if (provider.empty()) return nullptr;
    // As the daemon's tables are asked: transport:provider, then provider;
    // the key that answered is the scope, shared by every queue it covers.
    auto lookup =
        [&](const conf::LookupTables& t) -> std::optional<std::pair<std::string, std::string>> {
        for (const std::string& key : {transport + ":" + provider, provider})
            if (auto v = t.find(key)) return std::pair{key, *v};
        return std::nullopt;
    };
    auto c = lookup(concurrency_);
    auto r = lookup(rates_);
    std::optional<int> limit;
    std::optional<cluster::RateSpec> rate;
    if (c) {
        if (auto n = cluster::parse_concurrency(c->second))
            limit = *n;
        else
            warn_("cqmgr_provider_concurrency_limits: " + c->first + ": " + n.error().message());
    }
    if (r) {
        if (auto spec = cluster::parse_rate(r->second))
            rate = *spec;
        else
            warn_("cqmgr_provider_rate_limits: " + r->first + ": " + spec.error().message());
    }
    if (!limit && !rate) return nullptr;
    // One scope per key pair: a queue whose concurrency and rate come from
    // different keys counts with the others of both.
    std::string key = (limit ? c->first : "") + '\0' + (rate ? r->first : "");
    Scope& sc = scopes_[key];
    sc.limit = limit.value_or(0);
    sc.rate = rate;
    queue_scope_[queue_key(transport, name)] = key;
    return &sc;
}

ProviderGates::Scope* ProviderGates::member_scope(const core::Queue& q) {
    auto it = queue_scope_.find(queue_key(q.transport->name, q.name));
    if (it == queue_scope_.end() || it->second.empty()) return nullptr;
    return &scopes_.at(it->second);
}

int ProviderGates::allowance(const Scope& sc, const Member& m) const {
    qmgr::GateCounts c;
    c.limit = sc.limit;
    c.busy = m.busy;
    c.scope_busy = sc.busy;
    c.rate = sc.rate.has_value();
    c.tokens = m.tokens;
    return qmgr::gate_allowance(c).value_or(std::numeric_limits<int>::max());
}

std::optional<int> ProviderGates::queue_gate(const core::Queue& q) {
    Scope* sc = member_scope(q);
    if (!sc) {
        auto key = queue_key(q.transport->name, q.name);
        if (queue_scope_.count(key)) return std::nullopt;
        sc = scope_of(q.transport->name, q.name);
        if (!sc) {
            queue_scope_[key] = "";
            return std::nullopt;
        }
    }
    Member& m = sc->members[{q.transport->name, q.name}];
    fresh_ = true;
    return allowance(*sc, m);
}

void ProviderGates::queue_freed(const core::Queue& q) {
    Scope* sc = member_scope(q);
    if (!sc) return;
    auto it = sc->members.find({q.transport->name, q.name});
    // Its deliveries are over (a queue is freed when nothing is left);
    // a token it held goes back unused, as the daemon's gate's does.
    if (it != sc->members.end() && it->second.busy == 0) sc->members.erase(it);
}

void ProviderGates::started(core::Scheduler& s, const core::Queue& q, double now) {
    Scope* sc = member_scope(q);
    if (!sc) return;
    Member& m = sc->members[{q.transport->name, q.name}];
    m.busy++;
    sc->busy++;
    if (m.tokens > 0) m.tokens--;
    want(s, *sc, now);
    apply(s, *sc);
}

void ProviderGates::ended(core::Scheduler& s, const core::Queue& q, double now) {
    Scope* sc = member_scope(q);
    if (!sc) return;
    Member& m = sc->members[{q.transport->name, q.name}];
    m.busy--;
    sc->busy--;
    want(s, *sc, now);
    apply(s, *sc);
}

void ProviderGates::want(core::Scheduler& s, Scope& sc, double now) {
    if (!sc.rate) return;
    const double now_ms = now * 1000;
    const double horizon = cluster::gcra_booking_horizon_ms(*sc.rate);
    for (auto& [name, m] : sc.members) {
        if (m.token_at <= now) {
            m.tokens = 1;
            m.token_at = never;
        }
        if (m.tokens > 0 || m.token_at < never || (m.ask_at > now && m.ask_at < never)) continue;
        m.ask_at = never;
        const core::Queue* q = s.find_queue(name.first, name.second);
        if (!q || q->todo_count() == 0) continue;
        auto r = cluster::gcra_take(sc.tat, now_ms, *sc.rate, horizon);
        if (r.allowed && r.wait_ms <= 0)
            m.tokens = 1;
        else if (r.allowed)
            m.token_at = now + r.wait_ms / 1000;
        else
            m.ask_at = now + std::max(r.retry_after_ms, 1.0) / 1000;
    }
}

void ProviderGates::apply(core::Scheduler& s, Scope& sc) {
    for (auto& [name, m] : sc.members)
        if (core::Queue* q = s.find_queue(name.first, name.second))
            s.set_limit(*q, core::LimitChange::gate(allowance(sc, m)));
}

double ProviderGates::next_wake() const {
    if (fresh_) return 0;
    double t = never;
    for (const auto& [key, sc] : scopes_)
        for (const auto& [name, m] : sc.members)
            t = std::min({t, m.token_at, m.ask_at});
    return t;
}

void ProviderGates::wake(core::Scheduler& s, double now) {
    fresh_ = false;
    for (auto& [key, sc] : scopes_) {
        want(s, sc, now);
        apply(s, sc);
    }
}

} // namespace cqmgr::sim
