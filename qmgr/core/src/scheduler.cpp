// The driver's view of the scheduler: time and timers, messages and their
// recipients, connections, and the outcomes of deliveries, each handed to
// the unit that does the work.
#include "cqmgr/core/scheduler.hpp"

#include "core.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cqmgr::core {

namespace {

constexpr std::string_view suspended_prefix = "delivery temporarily suspended: ";

// True for an RFC 3463 status code with class 2, 4 or 5.
bool dsn_valid(std::string_view s) {
    auto digits = [&](size_t& i) {
        size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            ++i;
        return i - start >= 1 && i - start <= 3;
    };
    if (s.size() < 5 || (s[0] != '2' && s[0] != '4' && s[0] != '5') || s[1] != '.') return false;
    size_t i = 2;
    if (!digits(i) || i >= s.size() || s[i] != '.') return false;
    ++i;
    return digits(i) && i == s.size();
}

// Runs timer `t`, which was due at `due`.
void fire(Core& c, const Timer& t, int64_t due) {
    // The administrator's settings, the rules' actions and the learned
    // limits are kept by name, not by queue.
    if (t.kind == Timer::Kind::hold_expire || t.kind == Timer::Kind::cap_expire ||
        t.kind == Timer::Kind::rule_expire || t.kind == Timer::Kind::learned_expire) {
        Bound which = t.kind == Timer::Kind::hold_expire   ? Bound::hold
                      : t.kind == Timer::Kind::cap_expire  ? Bound::cap
                      : t.kind == Timer::Kind::rule_expire ? Bound::rule
                                                           : Bound::learned;
        c.limits.expire(which, AdminTarget{t.transport, t.queue}, due);
        return;
    }
    // A sender group's rule too, with or without its transport in memory.
    if (t.kind == Timer::Kind::sender_rule) {
        c.senders.rule_fire(t.transport, t.queue, due);
        return;
    }
    // Timers name their objects, so a timer that outlives its queue is harmless.
    Transport* tr = c.transports.find(t.transport);
    if (!tr) return;
    if (t.kind == Timer::Kind::transport_revive) {
        if (tr->dead && tr->dead_until == due) {
            c.transports.unthrottle(*tr);
            c.driver.wakeup();
        }
        return;
    }
    if (t.kind == Timer::Kind::sender) {
        c.senders.fire(*tr, t.queue, due);
        return;
    }
    auto qit = tr->queue_by_name.find(t.queue);
    if (qit == tr->queue_by_name.end()) return;
    Queue& q = *qit->second;
    if (q.timer_due != due) return;
    q.timer_due = 0;
    if (t.kind == Timer::Kind::queue_revive && q.dead()) {
        c.queues.revive(q);
    } else if (t.kind == Timer::Kind::queue_resume && q.suspended) {
        c.queues.resume(q);
    }
    c.driver.wakeup();
}

} // namespace

void panic(const std::string& what) {
    std::fprintf(stderr, "panic: %s\n", what.c_str());
    std::abort();
}

void DriverCalls::reentered(const char* api) {
    panic(std::string("scheduler: ") + api + " called from inside a driver callback");
}

Scheduler::Scheduler(SchedulerConfig cfg, TransportConfigFn transport_cfg, Driver& driver)
    : c_(std::make_unique<Core>(std::move(cfg), std::move(transport_cfg), driver)) {}

Scheduler::~Scheduler() = default;

// ---- time ----

void Scheduler::set_time(int64_t now) {
    c_->driver.outside("set_time");
    if (now < c_->now) return; // the clock never runs backwards for us
    c_->now = now;
    while (auto due = c_->timers.take_due(now))
        fire(*c_, due->second, due->first);
}

bool Scheduler::in_callback() const {
    return c_->driver.notifying();
}

int64_t Scheduler::now() const {
    return c_->now;
}

std::optional<int64_t> Scheduler::next_timer() const {
    return c_->timers.next();
}

// ---- messages ----

void Scheduler::message_add(Message& m) {
    c_->driver.outside("message_add");
    m.queued_time = c_->now;
    m.rcpt_limit = c_->cfg.message_recipient_minimum;
    m.refill_time = c_->now;
}

int Scheduler::first_batch_limit(const Message& m) const {
    // Read generously while the active queue holds few recipients; never
    // fewer than the per-message minimum.
    int limit = c_->cfg.message_recipient_limit - c_->recipient_count;
    if (limit < m.rcpt_limit) limit = m.rcpt_limit;
    return std::clamp(limit, 1, max_batch);
}

int Scheduler::reread_limit(const Message& m) const {
    return message_reread_limit(m);
}

Transport& Scheduler::transport(const std::string& name) {
    c_->driver.outside("transport");
    return c_->transports.obtain(name);
}

Queue& Scheduler::queue_for(Transport& t, const std::string& name, const std::string& nexthop) {
    c_->driver.outside("queue_for");
    return c_->queues.queue_for(t, name, nexthop);
}

Queue* Scheduler::route(Transport& t, const std::string& name, const std::string& nexthop,
                        Dsn& reason, bool flush_each) {
    c_->driver.outside("route");
    return c_->queues.route(t, name, nexthop, reason, flush_each);
}

void Scheduler::assign(Message& m, Queue& q, Recipient r) {
    c_->driver.outside("assign");
    c_->entries.assign(m, q, std::move(r));
}

void Scheduler::batch_done(Message& m, bool has_unread, int rcpt_unread) {
    c_->driver.outside("batch_done");
    Core& c = *c_;
    c.trace([&] {
        return "qmgr_message_batch_done: " + m.id + ": " + std::to_string(m.rcpt_count) +
               " recipients in core, limit " + std::to_string(m.rcpt_limit) +
               (has_unread ? ", about " + std::to_string(rcpt_unread) + " unread" : ", all read");
    });
    m.has_unread = has_unread;
    m.rcpt_unread = has_unread ? std::max(rcpt_unread, 0) : 0;
    bool was_pending = m.refill_pending;
    m.refill_pending = false;
    m.refill_time = c.now;
    if (was_pending) message_hold_update(m);
    // Fully read: the exact needs of every job are known now, so surplus
    // slots go back to the pools (and on to the next job with unread mail).
    if (!has_unread)
        for (Job* j : m.jobs)
            c.jobs.move_limits(*j);
    // Jobs held back waiting for this batch may go now (selection resumes
    // at the first of them, or before).  Their maximum entry counts changed
    // with rcpt_unread.
    for (Job* j : m.jobs) {
        Transport& t = *j->transport;
        t.reset_candidate_cache();
        index_refresh(*j);
        c.jobs.unblock(*j);
    }
    c.driver.wakeup();
}

void Scheduler::message_free(Message& m) {
    c_->driver.outside("message_free");
    if (m.refcount != 0) panic("message_free: " + m.id + " still has entries");
    for (Job* j = m.jobs.release(); j;) {
        Job* next = j->next_job;
        c_->jobs.free(*j);
        j = next;
    }
}

// ---- selection and outcomes ----

Transport* Scheduler::select_transport() {
    c_->driver.outside("select_transport");
    return c_->transports.select();
}

void Scheduler::connection_ready(Transport& t) {
    c_->driver.outside("connection_ready");
    if (t.pending <= 0) panic("connection_ready: no pending connection on " + t.name);
    t.pending--;
}

void Scheduler::connection_failed(Transport& t, const Dsn& dsn) {
    c_->driver.outside("connection_failed");
    if (t.pending <= 0) panic("connection_failed: no pending connection on " + t.name);
    t.pending--;
    c_->transports.dead(t, dsn);
}

Entry* Scheduler::select_entry(Transport& t) {
    c_->driver.outside("select_entry");
    return c_->selection.select_entry(t);
}

void Scheduler::delivery_done(Entry* e, const DeliveryResult& r) {
    c_->driver.outside("delivery_done");
    Core& c = *c_;
    Queue& q = *e->queue;
    Transport& t = *q.transport;
    Message& m = *e->message;
    if (r.kind == DeliveryResult::Kind::unavailable) {
        // The entry waits again, and the dead transport hands its waiting
        // entries to retry.
        c.entries.unselect(e);
        c.transports.dead(t, transport_unavailable());
        return;
    }
    // A crashed agent defers the message; like stock, it gives the queue no
    // feedback either way (stock's crash status never reaches its throttle
    // test) and it does not revive the transport.
    const Dsn& hop = r.hop;
    if (r.crashed() || r.status != 0) {
        m.flags |= message_flag::defer;
        if (!r.crashed() && !hop.status.empty()) {
            Dsn dsn{dsn_valid(hop.status) ? hop.status : "4.0.0",
                    std::string(suspended_prefix) +
                        (hop.reason.empty() ? "unknown error" : hop.reason)};
            if (q.ready()) {
                c.queues.throttle(q, dsn);
                if (q.dead()) c.queues.defer_todo(q, dsn);
            }
        }
    }
    // A delivery that went through revives its transport and releases the
    // rate lock.  Stock leaves the lock on after a crash, which stalls the
    // transport for good; we release it then too.
    if (!r.crashed()) {
        c.transports.unthrottle(t);
        if (r.hop.reason.empty() && (q.ready() || q.dead())) c.queues.unthrottle(q);
        if (r.hop.reason.empty() && t.cfg.dest_share > 0) share_earn(q);
    } else {
        t.rate_locked = false;
    }
    c.entries.done(e, Entries::Which::busy, r.unseen);
    c.driver.wakeup();
}

void Scheduler::entry_unselect(Entry* e) {
    c_->driver.outside("entry_unselect");
    c_->entries.unselect(e);
}

// ---- limits ----

bool Scheduler::set_limit(const AdminTarget& target, const LimitChange& change) {
    c_->driver.outside("set_limit");
    return c_->limits.set(target, change);
}

bool Scheduler::set_limit(Queue& q, const LimitChange& change) {
    c_->driver.outside("set_limit");
    return c_->limits.set(q, change);
}

const LimitBook& Scheduler::limits() const {
    return c_->limits.book();
}

void Scheduler::set_sender_limit(SenderGroup g, const SenderLimit& limit) {
    c_->driver.outside("set_sender_limit");
    c_->senders.set_limit(g, limit);
}

bool Scheduler::set_sender_rule(const AdminTarget& target, SenderGroup g,
                                std::optional<RuleLimit> rule) {
    c_->driver.outside("set_sender_rule");
    return c_->senders.set_rule(target, g, rule);
}

void Scheduler::set_queue_provider(Queue& q, uint32_t provider) {
    c_->driver.outside("set_queue_provider");
    if (c_->senders.by_provider()) c_->senders.rescope(q, provider);
}

// ---- dead destinations, flushes, memory ----

void Scheduler::queue_mark_dead(Queue& q, const Dsn& dsn, int64_t until) {
    c_->driver.outside("queue_mark_dead");
    c_->queues.mark_dead(q, dsn, until);
}

void Scheduler::flush_dead() {
    c_->driver.outside("flush_dead");
    c_->transports.flush_dead();
}

std::vector<AdminTarget> Scheduler::admin_flush(const AdminTarget& target) {
    c_->driver.outside("admin_flush");
    return c_->limits.flush(target);
}

Queue* Scheduler::queue_restore_dead(const std::string& transport, const std::string& name,
                                     const std::string& nexthop, const Dsn& dsn, int64_t until) {
    c_->driver.outside("queue_restore_dead");
    return c_->queues.restore_dead(transport, name, nexthop, dsn, until);
}

void Scheduler::queue_remember(const std::string& transport, const std::string& name,
                               const QueueMemory& memory) {
    c_->driver.outside("queue_remember");
    c_->queues.remember(transport, name, memory);
}

// ---- inspection ----

Queue* Scheduler::find_queue(const std::string& transport, const std::string& name) const {
    return c_->queues.find(transport, name);
}

std::vector<Queue*> Scheduler::admin_queues(const AdminTarget& target) const {
    return c_->limits.queues(target);
}

int Scheduler::recipient_count() const {
    return c_->recipient_count;
}

int Scheduler::queue_count() const {
    return c_->queue_count;
}

const std::map<std::string, std::unique_ptr<Transport>>& Scheduler::transports() const {
    return c_->transports.all();
}

} // namespace cqmgr::core
