// Destinations remembered from an earlier run: a queue that was dead comes
// back dead, exactly as if it had died in this run, and a queue that was
// healthy starts at the window it had reached.  The daemon decides what it
// remembers (the destination state store); the core only applies it.
#include "core.hpp"

#include <algorithm>

namespace cqmgr::core {

Queue* Queues::restore_dead(const std::string& transport_name, const std::string& name,
                            const std::string& nexthop, const Dsn& dsn, int64_t until) {
    if (until <= c_.now || transport_name == c_.cfg.retry_transport) return nullptr;
    // Never longer than a death in this run would last: minimal_backoff_time
    // may have been lowered since, or the clock set back.
    until = std::min(until, c_.now + c_.cfg.minimal_backoff_time);
    Transport& t = c_.transports.obtain(transport_name);
    if (t.queue_by_name.contains(name)) return nullptr;
    memories_.erase({transport_name, name});
    Queue& q = create(t, name, nexthop);
    // The state throttle() leaves a queue in when it dies, with the
    // revival time it had.
    q.window = 0;
    q.success = q.failure = 0;
    q.fail_cohorts = std::max(t.cfg.fail_cohort_limit, 1);
    q.dsn = dsn;
    q.dflags = 0;
    q.timer_due = until;
    c_.timers.add(until, Timer{Timer::Kind::queue_revive, t.name, q.name});
    c_.trace([&] {
        return "qmgr_queue_restore: queue " + t.name + " " + name + ": dead until " +
               std::to_string(until) + ": " + dsn.status + " " + dsn.reason;
    });
    return &q;
}

void Queues::remember(const std::string& transport, const std::string& name,
                      const QueueMemory& memory) {
    if (memory.window <= 0 && memory.last_done <= 0) return;
    memories_[{transport, name}] = memory;
}

void Queues::recall(Queue& q) {
    Transport& t = *q.transport;
    auto it = memories_.find({t.name, q.name});
    if (it == memories_.end()) return;
    QueueMemory m = it->second;
    memories_.erase(it);
    if (m.window > 0) {
        int limit = t.cfg.dest_concurrency_limit;
        q.window = limit > 0 ? std::min(m.window, limit) : m.window;
    }
    q.last_done = m.last_done;
    c_.trace([&] {
        return "qmgr_queue_recall: queue " + t.name + " " + q.name + " window " +
               std::to_string(q.window);
    });
    // What is left of the destination rate delay after its last delivery.
    int delay = t.cfg.dest_rate_delay;
    if (delay > 0 && m.last_done > 0 && m.last_done + delay > c_.now)
        suspend(q, static_cast<int>(m.last_done + delay - c_.now));
}

} // namespace cqmgr::core
