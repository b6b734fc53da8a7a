// Entries: creation, selection for delivery, and completion.
#include "cqmgr/core/scheduler.hpp"

#include <algorithm>

namespace cqmgr::core {

namespace {
constexpr int conn_load = 0x0800;
constexpr int conn_store = 0x1000;
} // namespace

Entry* Scheduler::entry_create(Peer& p, Message& m) {
    Queue& q = *p.queue;
    if (q.dead()) panic("entry_create: dead queue " + q.name);
    auto* e = new Entry;
    e->message = &m;
    e->peer = &p;
    e->queue = &q;
    m.refcount++;
    p.entries.push_back(*e);
    p.refcount++;
    q.todo.push_back(*e);
    p.job->read_entries++;
    return e;
}

void Scheduler::entry_select(Entry* e) {
    Queue& q = *e->queue;
    Peer& p = *e->peer;
    q.todo.erase(q.todo.iterator_to(*e));
    q.busy.push_back(*e);
    p.entries.erase(p.entries.iterator_to(*e));
    p.job->selected_entries++;
    // Let agents reuse connections when deliveries to this destination come
    // back to back or run concurrently; stop storing them otherwise.
    bool back_to_back = q.last_done + 1 >= now_;
    if (!(q.dflags & conn_store)) {
        if (back_to_back) q.dflags |= conn_load | conn_store;
    } else if (!(q.busy_count() > 1 || back_to_back)) {
        q.dflags &= ~conn_store;
    }
}

void Scheduler::entry_done(Entry* e, Which which) {
    Queue& q = *e->queue;
    Message& m = *e->message;
    Peer& p = *e->peer;
    Job& j = *p.job;
    Transport& t = *j.transport;

    if (which == Which::busy) {
        if (!e->queue_hook.is_linked()) panic("entry_done: entry not on a queue");
        q.busy.erase(q.busy.iterator_to(*e));
    } else {
        p.entries.erase(p.entries.iterator_to(*e));
        j.selected_entries++;
        q.todo.erase(q.todo.iterator_to(*e));
    }
    int n = static_cast<int>(e->rcpts.size());
    j.rcpt_count -= n;
    m.rcpt_count -= n;
    recipient_count_ -= n;
    delete e;

    // Freed recipient slots flow to jobs that can use them.
    for (Job* sponsor : m.jobs) {
        if (sponsor->rcpt_count >= sponsor->rcpt_limit || sponsor == &j) continue;
        if (sponsor->stack_level < 0 || !m.has_unread) job_move_limits(*sponsor);
    }
    if (!m.has_unread) job_move_limits(j);

    // Destination rate delay: pause this queue after each delivery.
    if (which == Which::busy && t.cfg.dest_rate_delay > 0) {
        if (q.window > 1) panic("entry_done: window > 1 on rate-limited queue " + q.name);
        if (q.dead()) queue_unthrottle(q);
        if (q.ready()) queue_suspend(q, t.cfg.dest_rate_delay);
    }
    if (!q.suspended && q.blocker_tag == t.blocker_tag) job_blocker_update(q);

    p.refcount--;
    if (p.refcount == 0) peer_free(p);
    if (which == Which::busy) q.last_done = now_;
    if (q.todo.empty() && q.busy.empty()) {
        // Keep dead queues (they remember why) unless memory is tight.
        if (q.dead() && queue_count_ > 2 * cfg_.message_recipient_limit) {
            q.timer_due = 0;
            queue_unthrottle(q);
        }
        if (q.ready()) queue_done(q);
    }
    m.refcount--;
    if (m.refcount < 0) panic("entry_done: negative refcount for " + m.id);
    if (m.refcount == 0) driver_.message_done(m);
}

} // namespace cqmgr::core
