// The daemon's own limit sources for explain (control_explain.hpp): dead,
// administrator's settings, cluster, learned, share and main.cf.
#include "cluster_limits.hpp"
#include "control_explain.hpp"
#include "control_queries.hpp"
#include "explain_text.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {

using Bound = LimitLine::Bound;

// "4.4.1 reason" of a hop status.
std::string dsn_text(const std::optional<core::Dsn>& dsn) {
    if (!dsn) return "no reason recorded";
    return dsn->status.empty() ? dsn->reason : dsn->status + " " + dsn->reason;
}

// What an administrator's setting of `which` for queue `q` names: its own
// target, else its name on every transport (LimitBook::covering).
template <class Map> std::string admin_target(const Map& m, const core::Queue& q) {
    core::AdminTarget own{q.transport->name, q.name};
    return (m.count(own) ? own : core::AdminTarget{{}, q.name}).text();
}

// A rate of one delivery every `seconds`.
double every(double seconds) {
    return 1.0 / seconds;
}

} // namespace

void dead_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    if (t.dead)
        lines.push_back({Bound::stop, 0, "dead",
                         "the transport " + t.name + " is dead (" + dsn_text(t.dsn) + ") until " +
                             when_text(t.dead_until, s.now)});
    if (q.dead())
        lines.push_back({Bound::stop, 0, "dead",
                         "the destination is dead (" + dsn_text(q.dsn) + ") until " +
                             when_text(q.timer_due, s.now)});
}

void admin_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    const core::LimitBook& book = s.src.sched.limits();
    if (t.hold) lines.push_back({Bound::stop, 0, "admin", hold_text(t.name, *t.hold, s.now)});
    if (const auto& h = q.limits.hold)
        lines.push_back(
            {Bound::stop, 0, "admin", hold_text(admin_target(book.holds(), q), *h, s.now)});
    if (const auto& c = q.limits.cap)
        lines.push_back({Bound::concurrency, double(c->concurrency), "admin",
                         cap_text(admin_target(book.caps(), q), *c, s.now)});
}

void cluster_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const std::optional<int>& gate = s.queue.limits.gate;
    auto v = s.src.cluster ? s.src.cluster->gate_view(s.queue) : std::nullopt;
    if (!v) {
        // A gate of the driver's that no cluster limit explains (the
        // providers' limits explain theirs: explain_features.hpp).
        const ClusterLimits* providers = s.src.provider_limits;
        if (gate && !(providers && providers->gate_view(s.queue)))
            lines.push_back({Bound::concurrency, double(*gate), "gate",
                             "the queue manager's gate on this destination"});
        return;
    }
    if (v->mark_pending)
        lines.push_back(
            {Bound::stop, 0, "cluster", "its shared dead mark is being read (cqmgr_redis_server)"});
    if (v->allowance) {
        std::string d = "the cluster gate: ";
        if (v->limit > 0)
            d += "cqmgr_cluster_concurrency_limits " + v->lease_scope + " = " +
                 std::to_string(v->limit) +
                 " across the cluster; leases held here: " + std::to_string(v->leases) +
                 " by this destination, " + std::to_string(v->scope_leases) + " in the scope" +
                 (v->shared ? " (shared through Redis; the cluster-wide count is not read here)"
                            : " (Redis away: this host keeps the limit alone)");
        if (v->rate)
            d += std::string(v->limit > 0 ? "; " : "") +
                 "rate tokens held: " + std::to_string(v->tokens);
        lines.push_back({Bound::concurrency, double(*v->allowance), "cluster", d});
    }
    if (v->rate)
        lines.push_back({Bound::rate, v->rate->per_second(), "cluster",
                         "cqmgr_rate_limits " + v->rate_scope + " = " + v->rate->text() +
                             (v->rate_shared ? " (the cluster's cell in Redis)"
                                             : " (a local cell: Redis away)")});
}

void learned_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Queue& q = s.queue;
    const core::LearnedLimit& l = q.limits.learned;
    if (!l.any()) return;
    const AdaptiveLimits* adaptive = s.src.adaptive;
    std::string why;
    if (const AdaptiveLimits::Cause* c = adaptive ? adaptive->cause(q) : nullptr)
        why = " from \"" + (c->status.empty() ? c->text : c->status + " " + c->text) + "\" (" +
              reply_class_name(c->cls) + ") at " + when_text(c->when, s.now);
    if (l.concurrency > 0) {
        bool slow = adaptive && adaptive->slow_start(q);
        lines.push_back({Bound::concurrency, double(l.concurrency), "learned",
                         slow ? "slow start: nothing learned yet, this many at once until "
                                "deliveries succeed (cqmgr_adaptive_limit_transports)"
                              : "learned concurrency limit" + why});
    }
    if (l.rate_delay > 0) {
        lines.push_back({Bound::concurrency, 1, "learned",
                         "one delivery at a time while a learned pause applies"});
        lines.push_back({Bound::rate, every(l.rate_delay), "learned",
                         "a pause of " + std::to_string(l.rate_delay) +
                             "s after each delivery, learned" + why});
    }
    if (l.quota > 0) {
        const std::string quota =
            std::to_string(l.quota) + " deliveries per " + std::to_string(l.window) + "s window";
        lines.push_back({Bound::rate, double(l.quota) / std::max(l.window, 1), "learned",
                         "a quota of " + quota + ", learned" + why});
        if (l.held_until > 0)
            lines.push_back(
                {Bound::stop, 0, "learned",
                 "the window's quota is spent: held until " + when_text(l.held_until, s.now)});
    }
}

void share_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    if (q.limits.share > 0) {
        const int full = core::share_full(t);
        std::string d = "cqmgr_destination_agent_share = " + std::to_string(t.cfg.dest_share) +
                        "% of the process limit " + std::to_string(t.cfg.process_limit) + ": " +
                        std::to_string(full) + " agents";
        if (q.limits.share < full)
            d += q.limits.share_always ? "; a probe of one delivery after its death (binds always)"
                                       : "; lowered to " + std::to_string(q.limits.share) +
                                             " after slow or timed-out deliveries";
        if (!q.limits.share_always)
            d += s.others_wait ? "; binds while another destination of " + t.name +
                                     " waits for an agent, as one does now"
                               : "; not in force: no other destination of " + t.name +
                                     " waits for an agent now";
        lines.push_back({Bound::concurrency, double(q.limits.share), "share", d,
                         s.others_wait || q.limits.share_always});
    }
    // The lanes bound the transport's deliveries, not this destination's:
    // shown, never binding here.
    if (int cap = core::lane_cap(t); cap >= 0)
        lines.push_back(
            {Bound::concurrency, double(cap), "share",
             "cqmgr_urgent_agent_share = " + std::to_string(t.cfg.urgent_share) +
                 "%: mail other than urgent may have this many deliveries in flight on " + t.name +
                 " (" + std::to_string(core::lane_other_busy(t)) + " now" +
                 (core::lane_capped(t) ? ", at the cap" : "") + "); the whole transport",
             false});
    if (t.cfg.bulk_share > 0)
        lines.push_back({Bound::concurrency, double(t.cfg.bulk_share), "share",
                         "cqmgr_bulk_agent_share: this percentage of " + t.name +
                             "'s deliveries in flight is kept for mail other than urgent "
                             "while it waits; the whole transport",
                         false});
}

void main_cf_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    const core::TransportConfig& c = t.cfg;
    const std::string& n = t.name;
    if (c.dest_concurrency_limit > 0)
        lines.push_back(
            {Bound::concurrency, double(c.dest_concurrency_limit), "main.cf",
             n + "_destination_concurrency_limit" +
                 (c.dest_rate_delay > 0 ? " (1 while " + n + "_destination_rate_delay is set)"
                                        : std::string())});
    lines.push_back({Bound::concurrency, double(q.window), "main.cf",
                     "the concurrency window now (from " + n + "_initial_destination_concurrency " +
                         std::to_string(c.init_dest_concurrency) +
                         ", moved by the concurrency feedback)"});
    if (c.dest_rate_delay > 0)
        lines.push_back({Bound::rate, every(c.dest_rate_delay), "main.cf",
                         n + "_destination_rate_delay " + std::to_string(c.dest_rate_delay) + "s" +
                             (q.suspended ? "; pausing until " + when_text(q.timer_due, s.now)
                                          : std::string())});
    if (c.transport_rate_delay > 0)
        lines.push_back({Bound::rate, every(c.transport_rate_delay), "main.cf",
                         n + "_transport_rate_delay " + std::to_string(c.transport_rate_delay) +
                             "s (the whole transport)"});
}

} // namespace cqmgr::qmgr
