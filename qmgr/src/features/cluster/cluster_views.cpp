// What ClusterLimits shows of its gates and scopes (see
// cluster_limits.hpp), for the gates' arithmetic, the control socket and
// the metrics.
#include "cluster_limits_gate.hpp"

namespace cqmgr::qmgr {

using namespace cluster_gate;

std::optional<int> ClusterLimits::own_gate(const std::string& transport, const std::string& queue) {
    if (gates_.empty()) return std::nullopt;
    Gate* g = gate_for(gate_key(transport, queue));
    return g ? gate_value(*g) : std::nullopt;
}

std::optional<ClusterLimits::GateView> ClusterLimits::view(const std::string& transport,
                                                           const std::string& queue) const {
    const core::Queue* q = sched_.find_queue(transport, queue);
    return q ? gate_view(*q) : std::nullopt;
}

int ClusterLimits::scope_busy(const std::string& scope) const {
    auto it = local_busy_.find(scope);
    return it == local_busy_.end() ? 0 : it->second;
}

int ClusterLimits::leases_held() const {
    int n = 0;
    for (const auto& [scope, leases] : scope_leases_)
        n += leases;
    return n;
}

std::optional<bool> ClusterLimits::redis_up() const {
    return shared_ ? std::optional<bool>(shared_->up()) : std::nullopt;
}

int ClusterLimits::scope_leases(const std::string& scope) const {
    auto it = scope_leases_.find(scope);
    return it == scope_leases_.end() ? 0 : it->second;
}

GateCounts ClusterLimits::counts(const Gate& g) const {
    GateCounts c;
    c.mark_pending = g.mark_pending;
    c.limit = g.limit;
    c.shared = leases_count();
    c.leases = usable_leases(g);
    c.busy = g.busy;
    c.closing = g.closing;
    if (g.limit > 0) {
        c.scope_busy = scope_busy(g.lease_scope);
        c.scope_leases = scope_leases(g.lease_scope);
    }
    c.rate = g.rate.has_value();
    c.tokens = g.tokens;
    return c;
}

std::optional<ClusterLimits::GateView> ClusterLimits::gate_view(const core::Queue& q) const {
    auto it = gates_.find(gate_key(q.transport->name, q.name));
    if (it == gates_.end()) return std::nullopt;
    const Gate& g = *it->second;
    // A gate kept only for the dead marks, once its mark is read.
    if (g.limit <= 0 && !g.rate && !g.mark_pending) return std::nullopt;
    GateView v;
    v.lease_scope = g.limit > 0 ? g.lease_scope : std::string();
    v.limit = g.limit;
    v.leases = usable_leases(g);
    v.scope_leases = g.limit > 0 ? scope_leases(g.lease_scope) : 0;
    v.shared = leases_count();
    v.rate_scope = g.rate ? g.rate_scope : std::string();
    v.rate = g.rate;
    v.tokens = g.tokens;
    v.rate_shared = rate_shared();
    v.mark_pending = g.mark_pending;
    // This instance's own: the core's gate is narrowed by the other's too.
    v.allowance = gate_value(g);
    return v;
}

} // namespace cqmgr::qmgr
