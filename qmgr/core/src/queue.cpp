// Destination queues: creation and release, concurrency feedback, dead
// destinations, the rate-delay pause, routing to the retry transport.
#include "core.hpp"
#include "window.hpp"

namespace cqmgr::core {

Queue& Queues::create(Transport& t, const std::string& name, const std::string& nexthop) {
    auto& slot = t.queue_by_name[name];
    if (slot) panic("queue_create: duplicate queue " + t.name + "/" + name);
    slot = std::make_unique<Queue>();
    slot->transport = &t;
    slot->name = name;
    slot->nexthop = nexthop;
    slot->window = t.cfg.init_dest_concurrency;
    if (free_slots_.empty()) {
        slot->slot = slots_++;
        // Room for every slot given, so that freeing a queue (as most
        // deliveries do when mail is spread thin) never allocates.
        if (free_slots_.capacity() < slots_) free_slots_.reserve(2 * slots_);
    } else {
        slot->slot = free_slots_.back();
        free_slots_.pop_back();
    }
    t.queues_rr.push_back(*slot);
    c_.queue_count++;
    if (!memories_.empty()) recall(*slot);
    if (!c_.limits.book().empty() || t.cfg.dest_share > 0) c_.limits.apply(*slot);
    // Nothing is known of it yet: its share starts at one agent (share.cpp).
    if (share_full(t) > 0) slot->share_earned = 1;
    slot->limits.gate = c_.driver.queue_gate(*slot);
    // Its provider, for sender limits counted per provider (sender.cpp):
    // asked only while some group has such a limit.
    if (c_.senders.by_provider()) slot->provider = c_.driver.queue_provider(*slot);
    c_.trace([&] { return "qmgr_queue_create: " + t.name + " " + name + " nexthop " + nexthop; });
    return *slot;
}

Queue* Queues::find(const std::string& transport, const std::string& name) const {
    Transport* t = c_.transports.find(transport);
    if (!t) return nullptr;
    auto q = t->queue_by_name.find(name);
    return q == t->queue_by_name.end() ? nullptr : q->second.get();
}

void Queues::done(Queue& q) {
    if (!q.todo.empty() || !q.busy.empty()) panic("queue_done: queue " + q.name + " not empty");
    if (!q.ready()) panic("queue_done: queue " + q.name + " not ready");
    c_.driver.queue_freed(q);
    free_slots_.push_back(q.slot);
    Transport& t = *q.transport;
    t.queues_rr.erase(t.queues_rr.iterator_to(q));
    c_.queue_count--;
    t.queue_by_name.erase(q.name); // destroys q
}

Queue& Queues::queue_for(Transport& t, const std::string& name, const std::string& nexthop) {
    auto retry_queue = [&](const Dsn& dsn) -> Queue& {
        Transport& rt = c_.transports.obtain(c_.cfg.retry_transport);
        std::string qn = dsn.status + " " + dsn.reason;
        auto it = rt.queue_by_name.find(qn);
        if (it != rt.queue_by_name.end()) return *it->second;
        return create(rt, qn, qn);
    };
    if (t.dead) return retry_queue(*t.dsn);
    auto it = t.queue_by_name.find(name);
    if (it != t.queue_by_name.end()) {
        if (it->second->dead()) return retry_queue(*it->second->dsn);
        return *it->second;
    }
    return create(t, name, nexthop);
}

Queue* Queues::route(Transport& t, const std::string& name, const std::string& nexthop, Dsn& reason,
                     bool flush_each) {
    const std::optional<Dsn>* why = nullptr;
    auto it = t.queue_by_name.find(name);
    // A message flushed on its own (postqueue -i/-s) brings its dead
    // transport and destination back first, as stock qmgr does while it
    // resolves such a message.
    if (flush_each) {
        if (t.dead) {
            c_.transports.unthrottle(t);
            c_.driver.wakeup();
        }
        if (it != t.queue_by_name.end() && it->second->dead()) unthrottle(*it->second);
    }
    if (t.dead)
        why = &t.dsn;
    else if (it != t.queue_by_name.end() && it->second->dead())
        why = &it->second->dsn;
    if (why) {
        if (!*why) panic("route: dead " + t.name + "/" + name + " without a reason");
        Transport& rt = c_.transports.obtain(c_.cfg.retry_transport);
        auto rit = rt.queue_by_name.find((*why)->status + " " + (*why)->reason);
        if (rt.dead || (rit != rt.queue_by_name.end() && rit->second->dead())) {
            reason = **why;
            return nullptr;
        }
    }
    return &queue_for(t, name, nexthop);
}

void Queues::unthrottle(Queue& q) {
    Transport& t = *q.transport;
    if (!q.ready() && !q.dead()) panic("queue_unthrottle: queue " + q.name + " is suspended");
    q.fail_cohorts = 0;
    if (q.dead()) {
        // Back from the dead: the best concurrency is anyone's guess.
        c_.trace(
            [&] { return "qmgr_queue_unthrottle: queue " + t.name + " " + q.name + " revived"; });
        q.dsn.reset();
        q.timer_due = 0;
        q.window = q.busy_count() > 0 ? q.busy_count() : t.cfg.init_dest_concurrency;
        q.success = q.failure = 0;
        c_.driver.queue_window(q, true);
        return;
    }
    window_grow(q, c_.driver);
    c_.driver.queue_window(q, true);
}

// Brings dead queue `q` back now (its revival timer is cancelled); a revived
// queue with nothing to do is let go, as stock does.
void Queues::revive(Queue& q) {
    q.timer_due = 0;
    unthrottle(q);
    if (q.todo.empty() && q.busy.empty()) done(q);
}

void Queues::throttle(Queue& q, const Dsn& dsn) {
    Transport& t = *q.transport;
    if (!q.ready()) panic("queue_throttle: queue " + q.name + " not ready");
    if (q.dsn) panic("queue_throttle: queue " + q.name + " already has a reason");
    window_shrink(q, c_.driver);
    if (q.dead()) {
        c_.trace([&] {
            return "qmgr_queue_throttle: queue " + t.name + " " + q.name + ": dead (" +
                   std::to_string(q.fail_cohorts) + " failed cohorts): " + dsn.status + " " +
                   dsn.reason;
        });
        q.dsn = dsn;
        q.dflags = 0;
        q.timer_due = c_.now + c_.cfg.minimal_backoff_time;
        c_.timers.add(q.timer_due, Timer{Timer::Kind::queue_revive, t.name, q.name});
    }
    c_.driver.queue_window(q, false);
}

void Queues::mark_dead(Queue& q, const Dsn& dsn, int64_t until) {
    // Only a live queue, not one pausing for its rate delay (its timer is
    // the resume) and not one dead already.
    if (!q.ready() || q.dsn) return;
    Transport& t = *q.transport;
    c_.trace([&] {
        return "queue_mark_dead: queue " + t.name + " " + q.name + ": dead until " +
               std::to_string(until) + ": " + dsn.status + " " + dsn.reason;
    });
    q.window = 0;
    q.dsn = dsn;
    q.dflags = 0;
    q.timer_due = std::max(until, c_.now + 1);
    c_.timers.add(q.timer_due, Timer{Timer::Kind::queue_revive, t.name, q.name});
    c_.driver.queue_window(q, false);
    defer_todo(q, dsn); // a dead queue stays, even when emptied
    c_.driver.wakeup();
}

void Queues::defer_todo(Queue& q, const Dsn& dsn) {
    // Waiting entries go to the retry transport, which logs each recipient as
    // deferred with the reason.  Entries already there (or when retry itself,
    // or its queue for this reason, is dead) are deferred by the driver.
    Transport& rt = c_.transports.obtain(c_.cfg.retry_transport);
    const std::string retry_name = dsn.status + " " + dsn.reason;
    auto rit = rt.queue_by_name.find(retry_name);
    bool to_retry =
        q.transport != &rt && !rt.dead && (rit == rt.queue_by_name.end() || !rit->second->dead());
    while (!q.todo.empty()) {
        Entry* e = &q.todo.front();
        Message& m = *e->message;
        // The last entry may take a ready queue with it (Entries::done frees
        // empty ready queues), so decide now whether to look again.
        bool last = q.todo.size() == 1;
        std::vector<Recipient> rcpts(e->rcpts.begin(), e->rcpts.end());
        m.refcount++; // keep the message alive while its entry moves
        c_.entries.done(e, Entries::Which::todo);
        if (to_retry) {
            Queue& rq = queue_for(rt, retry_name, retry_name);
            for (auto& r : rcpts)
                c_.entries.assign(m, rq, std::move(r));
        } else {
            m.flags |= message_flag::defer;
            c_.driver.defer_recipients(m, rcpts, dsn);
        }
        m.refcount--;
        if (m.refcount == 0) c_.driver.message_done(m);
        if (last) break;
    }
}

void Queues::suspend(Queue& q, int delay) {
    c_.trace([&] {
        return "qmgr_queue_suspend: queue " + q.transport->name + " " + q.name + " for " +
               std::to_string(delay) + "s (destination rate delay)";
    });
    q.suspended = true;
    q.timer_due = c_.now + delay;
    c_.timers.add(q.timer_due, Timer{Timer::Kind::queue_resume, q.transport->name, q.name});
}

void Queues::resume(Queue& q) {
    q.suspended = false;
    c_.jobs.blocker_update(q);
    if (q.todo.empty() && q.busy.empty()) done(q);
}

} // namespace cqmgr::core
