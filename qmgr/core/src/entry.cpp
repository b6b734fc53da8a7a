// Entries: creation, selection for delivery, and completion.
#include "core.hpp"

#include <algorithm>

namespace cqmgr::core {

namespace {
constexpr int conn_load = 0x0800;
constexpr int conn_store = 0x1000;
} // namespace

void Entries::assign(Message& m, Queue& q, Recipient r) {
    if (q.dead()) panic("assign: queue " + q.name + " is dead");
    Job& j = c_.jobs.obtain(m, *q.transport);
    Peer& p = peer_obtain(j, q);
    if (m.sender_group && !p.sender) c_.senders.attach(p);
    int limit = q.transport->cfg.dest_recipient_limit;
    if (m.single_rcpt) limit = 1;
    // Fill the peer's newest waiting entry before starting another.
    Entry* e = p.entries.empty() ? nullptr : &p.entries.back();
    if (!e || (limit > 0 && static_cast<int>(e->rcpts.size()) >= limit)) e = create(p, m);
    // Doubling, but never past the limit: a full entry of 50 recipients
    // has room for 50, not 64 (a fifth of all recipient memory).
    auto& v = e->rcpts;
    if (limit > 0 && v.size() == v.capacity())
        v.reserve(std::min<size_t>(static_cast<size_t>(limit), std::max<size_t>(1, 2 * v.size())));
    v.push_back(std::move(r));
    peer_hold_update(p);
    m.rcpt_count++;
    j.rcpt_count++;
    c_.recipient_count++;
}

Entry* Entries::create(Peer& p, Message& m) {
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
    sender_todo(p, 1);
    peer_hold_update(p);
    p.job->read_entries++;
    index_refresh(*p.job);
    clog_check(q);
    return e;
}

void Entries::clog_check(Queue& q) {
    // One destination holding a fifth of the active queue slows everything
    // else; say so at most once per clog_warn_time, with advice, as stock does.
    if (c_.cfg.clog_warn_time <= 0) return;
    int length = q.todo_count() + q.busy_count();
    if (length <= c_.cfg.message_active_limit / 5 || c_.now < q.clog_time_to_warn) return;
    int messages = std::max(c_.driver.active_messages(), 1);
    Transport& t = *q.transport;
    double share = static_cast<double>(length) / messages;
    c_.driver.warn("mail for " + q.nexthop + " is using up " + std::to_string(length) + " of " +
                   std::to_string(messages) + " active queue entries");
    if (share < 0.9) c_.driver.warn("this may slow down other mail deliveries");
    if (t.cfg.dest_concurrency_limit > 0 && t.cfg.dest_concurrency_limit <= q.busy_count() + 1) {
        c_.driver.warn("you may need to increase the main.cf " + t.name +
                       "_destination_concurrency_limit from " +
                       std::to_string(t.cfg.dest_concurrency_limit));
    } else if (q.window > c_.cfg.message_active_limit * share) {
        c_.driver.warn("you may need to increase the main.cf qmgr_message_active_limit from " +
                       std::to_string(c_.cfg.message_active_limit));
    } else if (t.queues_rr.size() > 1) {
        // Other destinations share the transport's agents.
        c_.driver.warn("you may need a separate master.cf transport for " + q.nexthop);
    } else {
        c_.driver.warn("you may need to reduce " + t.name + " connect and helo timeouts");
        c_.driver.warn("so that Postfix quickly skips unavailable hosts");
        c_.driver.warn(
            "you may need to increase the main.cf minimal_backoff_time and maximal_backoff_time");
        c_.driver.warn("so that Postfix wastes less time on undeliverable mail");
        c_.driver.warn("you may need to increase the master.cf " + t.name + " process limit");
    }
    c_.driver.warn("please avoid flushing the whole queue when you have");
    c_.driver.warn("lots of deferred mail, that is bad for performance");
    c_.driver.warn("to turn off these warnings specify: qmgr_clog_warn_time = 0");
    q.clog_time_to_warn = c_.now + c_.cfg.clog_warn_time;
}

void Entries::select(Entry* e) {
    Queue& q = *e->queue;
    Peer& p = *e->peer;
    q.todo.erase(q.todo.iterator_to(*e));
    q.busy.push_back(*e);
    lane_todo(*e, -1);
    lane_busy(*e, 1);
    if (p.sender) c_.senders.started(p);
    p.entries.erase(p.entries.iterator_to(*e));
    peer_hold_update(p);
    p.job->selected_entries++;
    p.job->in_flight++;
    index_refresh(*p.job);
    // Let agents reuse connections when deliveries to this destination come
    // back to back or run concurrently; stop storing them otherwise.
    bool back_to_back = q.last_done + 1 >= c_.now;
    if (!(q.dflags & conn_store)) {
        if (back_to_back) q.dflags |= conn_load | conn_store;
    } else if (!(q.busy_count() > 1 || back_to_back)) {
        q.dflags &= ~conn_store;
    }
}

void Entries::done(Entry* e, Which which, bool unseen) {
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
        if (p.sender) c_.senders.ended(p, !unseen);
    } else {
        p.entries.erase(p.entries.iterator_to(*e));
        peer_hold_update(p);
        j.selected_entries++;
        index_refresh(j);
        q.todo.erase(q.todo.iterator_to(*e));
        lane_todo(*e, -1);
        sender_todo(p, -1);
    }
    int n = static_cast<int>(e->rcpts.size());
    j.rcpt_count -= n;
    m.rcpt_count -= n;
    c_.recipient_count -= n;
    delete e;

    // Freed recipient slots flow to jobs that can use them.
    for (Job* sponsor : m.jobs) {
        if (sponsor->rcpt_count >= sponsor->rcpt_limit || sponsor == &j) continue;
        if (sponsor->stack_level < 0 || !m.has_unread) c_.jobs.move_limits(*sponsor);
    }
    if (!m.has_unread) c_.jobs.move_limits(j);

    // Destination rate delay: pause this queue after each delivery.  A
    // learned rate delay paces what the receiver sees, so it does not
    // follow a delivery the receiver never saw: after a postsuper -r, every
    // waiting entry of a requeued message is such a one, and pacing them
    // would hold the queue's real mail back by the delay once per entry.
    int learned_delay = unseen ? 0 : q.limits.pause();
    if (which == Which::busy && t.cfg.dest_rate_delay > 0) {
        if (q.window > 1) panic("entry_done: window > 1 on rate-limited queue " + q.name);
        if (q.dead()) c_.queues.unthrottle(q);
        if (q.ready()) c_.queues.suspend(q, std::max(t.cfg.dest_rate_delay, learned_delay));
    } else if (which == Which::busy && learned_delay > 0 && q.ready()) {
        // A learned rate delay pauses a live queue the same way (a dead one
        // stays dead: its death is the receiver's word too).
        c_.queues.suspend(q, learned_delay);
    }
    if (!q.suspended && q.blocker_tag == t.blocker_tag) c_.jobs.blocker_update(q);

    p.refcount--;
    if (p.refcount == 0) {
        if (p.sender) c_.senders.detach(p);
        peer_free(p);
    }
    if (which == Which::busy) q.last_done = c_.now;
    if (q.todo.empty() && q.busy.empty()) {
        // Keep dead queues (they remember why) unless memory is tight.
        if (q.dead() && c_.queue_count > 2 * c_.cfg.message_recipient_limit) {
            q.timer_due = 0;
            c_.queues.unthrottle(q);
        }
        if (q.ready()) c_.queues.done(q);
    }
    m.refcount--;
    if (m.refcount < 0) panic("entry_done: negative refcount for " + m.id);
    if (m.refcount == 0) c_.driver.message_done(m);
}

void Entries::unselect(Entry* e) {
    Queue& q = *e->queue;
    Peer& p = *e->peer;
    // Stock's order: last on the queue's list, first on the peer's, so that
    // the job sends it next and new recipients still fill the peer's last
    // entry.
    q.busy.erase(q.busy.iterator_to(*e));
    lane_busy(*e, -1);
    q.todo.push_back(*e);
    lane_todo(*e, 1);
    if (p.sender) {
        sender_todo(p, 1);
        c_.senders.ended(p, false);
    }
    p.entries.push_front(*e);
    peer_hold_update(p);
    p.job->selected_entries--;
    p.job->in_flight--;
    index_refresh(*p.job);
    // The job may have been retired when this was its last entry.
    if (p.job->stack_level < 0) c_.jobs.obtain(*e->message, *q.transport);
}

} // namespace cqmgr::core
