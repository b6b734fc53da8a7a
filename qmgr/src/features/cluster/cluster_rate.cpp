// ClusterLimits' rates (see cluster_limits.hpp): one token at a time from
// the shared GCRA cell, or from this host's own cell while Redis is away.
#include "cluster_limits_gate.hpp"

namespace cqmgr::qmgr {

using namespace cluster_gate;

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
                       [this, key, id = g.id, local, sent](const cluster::RateAnswer& a) {
                           Gate* g = gate_for(key, id);
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
    g.rate_timer->async_wait([this, key, id = g.id, granted](error_code ec) {
        if (ec) return;
        Gate* g = gate_for(key, id);
        if (!g) return;
        g->rate_waiting = false;
        if (granted) {
            g->tokens = 1;
            apply(*g);
        }
        want(*g);
    });
}

} // namespace cqmgr::qmgr
