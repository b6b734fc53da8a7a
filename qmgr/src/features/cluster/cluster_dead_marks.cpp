// ClusterLimits' shared dead marks (see cluster_limits.hpp): a destination
// this host declares dead is marked in Redis until its revival time, and
// a queue first seen here takes up the mark it finds.
#include "cluster_limits_gate.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

using namespace cluster_gate;

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
            apply_none(transport, queue);
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

} // namespace cqmgr::qmgr
