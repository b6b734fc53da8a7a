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
    lane_todo(*e, 1);
    peer_hold_update(p);
    p.job->read_entries++;
    index_refresh(*p.job);
    clog_check(q);
    return e;
}

void Scheduler::clog_check(Queue& q) {
    // One destination holding a fifth of the active queue slows everything
    // else; say so at most once per clog_warn_time, with advice, as stock does.
    if (cfg_.clog_warn_time <= 0) return;
    int length = q.todo_count() + q.busy_count();
    if (length <= cfg_.message_active_limit / 5 || now_ < q.clog_time_to_warn) return;
    int messages = std::max(driver_.active_messages(), 1);
    Transport& t = *q.transport;
    double share = static_cast<double>(length) / messages;
    driver_.warn("mail for " + q.nexthop + " is using up " + std::to_string(length) + " of " +
                 std::to_string(messages) + " active queue entries");
    if (share < 0.9) driver_.warn("this may slow down other mail deliveries");
    if (t.cfg.dest_concurrency_limit > 0 && t.cfg.dest_concurrency_limit <= q.busy_count() + 1) {
        driver_.warn("you may need to increase the main.cf " + t.name +
                     "_destination_concurrency_limit from " +
                     std::to_string(t.cfg.dest_concurrency_limit));
    } else if (q.window > cfg_.message_active_limit * share) {
        driver_.warn("you may need to increase the main.cf qmgr_message_active_limit from " +
                     std::to_string(cfg_.message_active_limit));
    } else if (t.queues_rr.size() > 1) {
        // Other destinations share the transport's agents.
        driver_.warn("you may need a separate master.cf transport for " + q.nexthop);
    } else {
        driver_.warn("you may need to reduce " + t.name + " connect and helo timeouts");
        driver_.warn("so that Postfix quickly skips unavailable hosts");
        driver_.warn(
            "you may need to increase the main.cf minimal_backoff_time and maximal_backoff_time");
        driver_.warn("so that Postfix wastes less time on undeliverable mail");
        driver_.warn("you may need to increase the master.cf " + t.name + " process limit");
    }
    driver_.warn("please avoid flushing the whole queue when you have");
    driver_.warn("lots of deferred mail, that is bad for performance");
    driver_.warn("to turn off these warnings specify: qmgr_clog_warn_time = 0");
    q.clog_time_to_warn = now_ + cfg_.clog_warn_time;
}

void Scheduler::entry_select(Entry* e) {
    Queue& q = *e->queue;
    Peer& p = *e->peer;
    q.todo.erase(q.todo.iterator_to(*e));
    q.busy.push_back(*e);
    lane_todo(*e, -1);
    lane_busy(*e, 1);
    p.entries.erase(p.entries.iterator_to(*e));
    peer_hold_update(p);
    p.job->selected_entries++;
    p.job->in_flight++;
    index_refresh(*p.job);
    // Let agents reuse connections when deliveries to this destination come
    // back to back or run concurrently; stop storing them otherwise.
    bool back_to_back = q.last_done + 1 >= now_;
    if (!(q.dflags & conn_store)) {
        if (back_to_back) q.dflags |= conn_load | conn_store;
    } else if (!(q.busy_count() > 1 || back_to_back)) {
        q.dflags &= ~conn_store;
    }
}

void Scheduler::entry_done(Entry* e, Which which, bool unseen) {
    Queue& q = *e->queue;
    Message& m = *e->message;
    Peer& p = *e->peer;
    Job& j = *p.job;
    Transport& t = *j.transport;

    if (which == Which::busy) {
        if (!e->queue_hook.is_linked()) panic("entry_done: entry not on a queue");
        q.busy.erase(q.busy.iterator_to(*e));
        lane_busy(*e, -1);
        j.in_flight--;
    } else {
        p.entries.erase(p.entries.iterator_to(*e));
        peer_hold_update(p);
        j.selected_entries++;
        index_refresh(j);
        q.todo.erase(q.todo.iterator_to(*e));
        lane_todo(*e, -1);
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

    // Destination rate delay: pause this queue after each delivery.  A
    // learned rate delay paces what the receiver sees, so it does not
    // follow a delivery the receiver never saw: after a postsuper -r, every
    // waiting entry of a requeued message is such a one, and pacing them
    // would hold the queue's real mail back by the delay once per entry.
    int learned_delay = unseen ? 0 : q.limits.pause();
    if (which == Which::busy && t.cfg.dest_rate_delay > 0) {
        if (q.window > 1) panic("entry_done: window > 1 on rate-limited queue " + q.name);
        if (q.dead()) queue_unthrottle(q);
        if (q.ready()) queue_suspend(q, std::max(t.cfg.dest_rate_delay, learned_delay));
    } else if (which == Which::busy && learned_delay > 0 && q.ready()) {
        // A learned rate delay pauses a live queue the same way (a dead one
        // stays dead: its death is the receiver's word too).
        queue_suspend(q, learned_delay);
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
