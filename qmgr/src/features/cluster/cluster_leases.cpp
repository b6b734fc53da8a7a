// ClusterLimits' concurrency leases (see cluster_limits.hpp): asking for
// one, keeping those a queue can use and giving back the rest, renewing
// every lease held, and giving back the spare ones at exit.
#include "cluster_limits_gate.hpp"

#include <map>

namespace cqmgr::qmgr {

using namespace cluster_gate;

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

void ClusterLimits::ask_lease(Gate& g) {
    g.lease_asking = true;
    std::string id = lease_prefix_ + std::to_string(++lease_seq_);
    std::string key = gate_key(g.transport, g.queue);
    std::string scope = g.lease_scope;
    const double sent = steady_ms();
    const uint64_t epoch = epoch_;
    shared_->lease_acquire(
        scope, id, g.limit, static_cast<int64_t>(lease_ms_),
        [this, key, gid = g.id, id, scope, sent, epoch](const cluster::LeaseAnswer& a) {
            Gate* g = gate_for(key, gid);
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

void ClusterLimits::retry_after(Gate& g, double ms) {
    g.retry_armed = true;
    g.retry->expires_after(micros(std::max(ms, 1.0)));
    std::string key = gate_key(g.transport, g.queue);
    g.retry->async_wait([this, key, id = g.id](error_code ec) {
        if (ec) return;
        if (Gate* g = gate_for(key, id)) {
            g->retry_armed = false;
            want(*g);
        }
    });
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
            (i < in_use ? l.in_use : l.spare).push_back({key, g->id, g->leases[i].id, false});
        // Deliveries started on local limits (Redis away for a lease time)
        // hold no lease: the cluster is told of them as well, up to its limit.
        for (size_t i = g->leases.size(); i < in_use; i++)
            l.in_use.push_back({key, g->id, lease_prefix_ + std::to_string(++lease_seq_), true});
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
        Gate* g = gate_for(r.key, r.gate);
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

} // namespace cqmgr::qmgr
