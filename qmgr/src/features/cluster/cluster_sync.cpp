// Where ClusterLimits stands with the shared state (see cluster_limits.hpp):
// away, taking its leases again on a new connection, or in step; and
// while away, the leases held count until they expire, then this host
// keeps the limits alone.
#include "cluster_limits_gate.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

using namespace cluster_gate;

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
