// Destination queues: creation, concurrency feedback, dead destinations.
#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

Queue& Scheduler::queue_create(Transport& t, const std::string& name, const std::string& nexthop) {
    auto& slot = t.queue_by_name[name];
    if (slot) panic("queue_create: duplicate queue " + t.name + "/" + name);
    slot = std::make_unique<Queue>();
    slot->transport = &t;
    slot->name = name;
    slot->nexthop = nexthop;
    slot->window = t.cfg.init_dest_concurrency;
    if (free_slots_.empty()) {
        slot->slot = slots_++;
    } else {
        slot->slot = free_slots_.back();
        free_slots_.pop_back();
    }
    t.queues_rr.push_back(*slot);
    queue_count_++;
    if (!memories_.empty()) queue_recall(*slot);
    if (!book_.empty() || t.cfg.dest_share > 0) admin_apply(*slot);
    slot->limits.gate = driver_.queue_gate(*slot);
    trace([&] { return "qmgr_queue_create: " + t.name + " " + name + " nexthop " + nexthop; });
    return *slot;
}

Queue* Scheduler::find_queue(const std::string& transport, const std::string& name) const {
    auto t = transports_.find(transport);
    if (t == transports_.end()) return nullptr;
    auto q = t->second->queue_by_name.find(name);
    return q == t->second->queue_by_name.end() ? nullptr : q->second.get();
}

void Scheduler::queue_done(Queue& q) {
    if (!q.todo.empty() || !q.busy.empty()) panic("queue_done: queue " + q.name + " not empty");
    if (!q.ready()) panic("queue_done: queue " + q.name + " not ready");
    driver_.queue_freed(q);
    free_slots_.push_back(q.slot);
    Transport& t = *q.transport;
    t.queues_rr.erase(t.queues_rr.iterator_to(q));
    queue_count_--;
    t.queue_by_name.erase(q.name); // destroys q
}

void Scheduler::queue_unthrottle(Queue& q) {
    Transport& t = *q.transport;
    if (!q.ready() && !q.dead()) panic("queue_unthrottle: queue " + q.name + " is suspended");
    q.fail_cohorts = 0;
    if (q.dead()) {
        // Back from the dead: the best concurrency is anyone's guess.
        trace([&] { return "qmgr_queue_unthrottle: queue " + t.name + " " + q.name + " revived"; });
        q.dsn.reset();
        q.timer_due = 0;
        q.window = q.busy_count() > 0 ? q.busy_count() : t.cfg.init_dest_concurrency;
        q.success = q.failure = 0;
        driver_.queue_window(q, true);
        return;
    }
    int limit = t.cfg.dest_concurrency_limit;
    // Grow only while the window is near what is really in use, so that
    // negative feedback is not outrun.
    if ((limit == 0 || limit > q.window) &&
        q.window < q.busy_count() + t.cfg.init_dest_concurrency) {
        double fb = t.cfg.pos_feedback.value(q.window);
        driver_.queue_feedback(q, true, fb);
        q.success += fb;
        double guard = t.cfg.overshoot_guard ? fb / 2 : 0;
        while (q.success + guard >= 1) {
            q.window += 1;
            q.success -= 1;
            q.failure = 0;
        }
        if (limit > 0 && q.window > limit) q.window = limit;
    }
    driver_.queue_window(q, true);
}

// Brings dead queue `q` back now (its revival timer is cancelled); a revived
// queue with nothing to do is let go, as stock does.
void Scheduler::queue_revive(Queue& q) {
    q.timer_due = 0;
    queue_unthrottle(q);
    if (q.todo.empty() && q.busy.empty()) queue_done(q);
}

void Scheduler::queue_throttle(Queue& q, const Dsn& dsn) {
    Transport& t = *q.transport;
    if (!q.ready()) panic("queue_throttle: queue " + q.name + " not ready");
    if (q.dsn) panic("queue_throttle: queue " + q.name + " already has a reason");
    // A destination that fails a whole pseudo-cohort is declared dead.
    q.fail_cohorts += 1.0 / q.window;
    if (t.cfg.fail_cohort_limit > 0 && q.fail_cohorts >= t.cfg.fail_cohort_limit) q.window = 0;
    if (q.ready()) {
        double fb = t.cfg.neg_feedback.value(q.window);
        driver_.queue_feedback(q, false, fb);
        q.failure -= fb;
        double guard = t.cfg.overshoot_guard ? fb / 2 : 0;
        while (q.failure - guard < 0) {
            q.window -= 1;
            q.success = 0;
            q.failure += 1;
        }
        if (q.window < 1) q.window = 1;
    }
    if (q.dead()) {
        trace([&] {
            return "qmgr_queue_throttle: queue " + t.name + " " + q.name + ": dead (" +
                   std::to_string(q.fail_cohorts) + " failed cohorts): " + dsn.status + " " +
                   dsn.reason;
        });
        q.dsn = dsn;
        q.dflags = 0;
        q.timer_due = now_ + cfg_.minimal_backoff_time;
        timer_add(q.timer_due, Timer{Timer::Kind::queue_revive, t.name, q.name});
    }
    driver_.queue_window(q, false);
}

void Scheduler::queue_mark_dead(Queue& q, const Dsn& dsn, int64_t until) {
    // Only a live queue, not one pausing for its rate delay (its timer is
    // the resume) and not one dead already.
    if (!q.ready() || q.dsn) return;
    Transport& t = *q.transport;
    trace([&] {
        return "queue_mark_dead: queue " + t.name + " " + q.name + ": dead until " +
               std::to_string(until) + ": " + dsn.status + " " + dsn.reason;
    });
    q.window = 0;
    q.dsn = dsn;
    q.dflags = 0;
    q.timer_due = std::max(until, now_ + 1);
    timer_add(q.timer_due, Timer{Timer::Kind::queue_revive, t.name, q.name});
    driver_.queue_window(q, false);
    queue_defer_todo(q, dsn); // a dead queue stays, even when emptied
    driver_.wakeup();
}

void Scheduler::queue_defer_todo(Queue& q, const Dsn& dsn) {
    // Waiting entries go to the retry transport, which logs each recipient as
    // deferred with the reason.  Entries already there (or when retry itself,
    // or its queue for this reason, is dead) are deferred by the driver.
    Transport& rt = transport(cfg_.retry_transport);
    const std::string retry_name = dsn.status + " " + dsn.reason;
    auto rit = rt.queue_by_name.find(retry_name);
    bool to_retry =
        q.transport != &rt && !rt.dead && (rit == rt.queue_by_name.end() || !rit->second->dead());
    while (!q.todo.empty()) {
        Entry* e = &q.todo.front();
        Message& m = *e->message;
        // The last entry may take a ready queue with it (entry_done frees
        // empty ready queues), so decide now whether to look again.
        bool last = q.todo.size() == 1;
        std::vector<Recipient> rcpts(e->rcpts.begin(), e->rcpts.end());
        m.refcount++; // keep the message alive while its entry moves
        entry_done(e, Which::todo);
        if (to_retry) {
            Queue& rq = queue_for(rt, retry_name, retry_name);
            for (auto& r : rcpts)
                assign(m, rq, std::move(r));
        } else {
            m.flags |= 1;
            driver_.defer_recipients(m, rcpts, dsn);
        }
        m.refcount--;
        if (m.refcount == 0) driver_.message_done(m);
        if (last) break;
    }
}

void Scheduler::queue_suspend(Queue& q, int delay) {
    trace([&] {
        return "qmgr_queue_suspend: queue " + q.transport->name + " " + q.name + " for " +
               std::to_string(delay) + "s (destination rate delay)";
    });
    q.suspended = true;
    q.timer_due = now_ + delay;
    timer_add(q.timer_due, Timer{Timer::Kind::queue_resume, q.transport->name, q.name});
}

} // namespace cqmgr::core
