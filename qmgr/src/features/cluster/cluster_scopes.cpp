// ClusterLimits' scopes (see cluster_limits.hpp): which table key covers a
// queue, the providers' scoping, the limits learned per provider that
// narrow it, and a queue scoped again when its provider changes.
#include "cluster_limits_gate.hpp"
#include "log.hpp"
#include "providers.hpp"

namespace cqmgr::qmgr {

using namespace cluster_gate;

std::optional<std::pair<std::string, std::string>>
ClusterLimits::lookup(const conf::LookupTables& t, const std::string& transport,
                      const std::string& queue) const {
    if (t.empty()) return std::nullopt;
    if (scoping_.keys) {
        for (const std::string& key : scoping_.keys(transport, queue))
            if (auto v = t.find(key)) return std::make_pair(key, *v);
        return std::nullopt;
    }
    for (const std::string& key : {transport + ":" + queue, queue, transport})
        if (auto v = t.find(key)) return std::make_pair(key, *v);
    return std::nullopt;
}

ClusterLimits::Tables ClusterLimits::open_tables(const conf::QmgrParams& params) {
    Tables t;
    t.rates = conf::LookupTables::open(params.cqmgr_rate_limits);
    t.concurrency = conf::LookupTables::open(params.cqmgr_cluster_concurrency_limits);
    t.provider_rates = conf::LookupTables::open(params.cqmgr_provider_rate_limits);
    t.provider_concurrency = conf::LookupTables::open(params.cqmgr_provider_concurrency_limits);
    t.provider_maps =
        ProviderMaps::open(params.cqmgr_provider_maps, [](const std::string& w) { log::warn(w); });
    return t;
}

ClusterLimits::Scoping ClusterLimits::provider_scoping(const Providers* providers) {
    Scoping s;
    s.concurrency_param = "cqmgr_provider_concurrency_limits";
    s.rate_param = "cqmgr_provider_rate_limits";
    s.scope_prefix = "provider:";
    s.dead_marks = false;
    s.keys = [providers](const std::string& transport, const std::string& queue) {
        std::vector<std::string> keys;
        const std::string* p = providers ? providers->provider_of(transport, queue) : nullptr;
        if (p) keys = {transport + ":" + *p, *p};
        return keys;
    };
    return s;
}

void ClusterLimits::set_learned(const std::string& key, const core::LearnedLimit& limit) {
    if (limit.any())
        learned_[key] = limit;
    else
        learned_.erase(key);
}

// In the table's scope, or else in scope_prefix + the first key.
void ClusterLimits::narrow_by_learned(Gate& g) {
    std::vector<std::string> keys = scoping_.keys(g.transport, g.queue);
    if (keys.empty()) return;
    auto it = learned_.find(keys.front());
    if (it == learned_.end()) return;
    ScopeLimits s = narrowed_by_learned({g.limit, g.rate}, it->second);
    std::string own = scoping_.scope_prefix + keys.front();
    if (s.concurrency != g.limit && g.lease_scope.empty()) g.lease_scope = own;
    if (s.rate != g.rate && g.rate_scope.empty()) g.rate_scope = own;
    g.limit = s.concurrency;
    g.rate = s.rate;
}

void ClusterLimits::rescope(const core::Queue& q) {
    if (!active_) return;
    std::string key = gate_key(q.transport->name, q.name);
    // What it has in flight now counts in its new scope (if any) instead:
    // those started before it had a gate here too.
    const int busy = q.busy_count();
    std::string old_scope;
    if (Gate* g = gate_for(key)) {
        if (g->limit > 0) {
            local_busy_[g->lease_scope] -= g->busy;
            old_scope = g->lease_scope;
        }
        drop_gate(key); // its leases go back after the linger
        set_gated(q, false);
    }
    Gate* g = make_gate(q);
    if (g) {
        g->busy = busy;
        if (g->limit > 0) local_busy_[g->lease_scope] += busy;
        apply(*g);
        want(*g);
    } else {
        apply_none(q.transport->name, q.name);
    }
    if (!old_scope.empty() && !leases_count()) apply_scope(old_scope);
    if (g && g->limit > 0 && !leases_count()) apply_scope(g->lease_scope);
}

} // namespace cqmgr::qmgr
