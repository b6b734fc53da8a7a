// Scheduler lifecycle, time, messages, transport selection and outcomes.
#include "cqmgr/core/scheduler.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cqmgr::core {

namespace {
// Stock qmgr lets a transport have this many connections that no agent has
// announced itself on yet.
constexpr int max_pending = 2;
constexpr int max_batch = 5000;
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
} // namespace

void panic(const std::string& what) {
    std::fprintf(stderr, "panic: %s\n", what.c_str());
    std::abort();
}

Scheduler::Scheduler(SchedulerConfig cfg, TransportConfigFn transport_cfg, Driver& driver)
    : cfg_(std::move(cfg)), transport_cfg_(std::move(transport_cfg)), driver_(driver) {}

Scheduler::~Scheduler() {
    // Unlink everything before the owning maps destroy the objects, so the
    // safe-mode hooks do not complain about objects dying while linked.
    transport_rr_.clear();
    for (auto& [name, t] : transports_) {
        t->queues_rr.clear();
        t->candidates.clear();
        t->urgent_jobs.clear();
        t->job_list.clear();
        t->job_bytime.clear();
        for (Job& j : t->jobs) {
            j.children.clear();
            j.peers.clear_and_dispose([](Peer* p) {
                p->entries.clear_and_dispose([](Entry*) {});
                delete p;
            });
        }
        t->jobs.clear_and_dispose([](Job* j) { delete j; });
        for (auto& [qn, q] : t->queue_by_name) {
            q->todo.clear_and_dispose([](Entry* e) { delete e; });
            q->busy.clear_and_dispose([](Entry* e) { delete e; });
        }
    }
}

// ---- time ----

void Scheduler::set_time(int64_t now) {
    if (now < now_) return; // the clock never runs backwards for us
    now_ = now;
    while (!timers_.empty() && timers_.begin()->first <= now_) {
        auto it = timers_.begin();
        int64_t due = it->first;
        Timer t = std::move(it->second);
        timers_.erase(it);
        timer_fire(t, due);
    }
}

std::optional<int64_t> Scheduler::next_timer() const {
    if (timers_.empty()) return std::nullopt;
    return timers_.begin()->first;
}

void Scheduler::timer_add(int64_t due, Timer t) {
    timers_.emplace(due, std::move(t));
}

void Scheduler::timer_fire(const Timer& t, int64_t due) {
    // The administrator's settings are kept by name, not by queue.
    if (t.kind == Timer::Kind::hold_expire || t.kind == Timer::Kind::cap_expire) {
        admin_expire(t.kind == Timer::Kind::hold_expire ? Bound::hold : Bound::cap,
                     AdminTarget{t.transport, t.queue}, due);
        return;
    }
    // Timers name their objects, so a timer that outlives its queue is harmless.
    auto tit = transports_.find(t.transport);
    if (tit == transports_.end()) return;
    Transport& tr = *tit->second;
    if (t.kind == Timer::Kind::transport_revive) {
        if (tr.dead && tr.dead_until == due) {
            transport_unthrottle(tr);
            driver_.wakeup();
        }
        return;
    }
    auto qit = tr.queue_by_name.find(t.queue);
    if (qit == tr.queue_by_name.end()) return;
    Queue& q = *qit->second;
    if (q.timer_due != due) return;
    q.timer_due = 0;
    if (t.kind == Timer::Kind::queue_revive && q.dead()) {
        queue_revive(q);
    } else if (t.kind == Timer::Kind::queue_resume && q.suspended) {
        q.suspended = false;
        job_blocker_update(q);
        if (q.todo.empty() && q.busy.empty()) queue_done(q);
    }
    driver_.wakeup();
}

// ---- messages ----

void Scheduler::message_add(Message& m) {
    m.queued_time = now_;
    m.rcpt_limit = cfg_.message_recipient_minimum;
    m.refill_time = now_;
}

int Scheduler::first_batch_limit(const Message& m) const {
    // Read generously while the active queue holds few recipients; never
    // fewer than the per-message minimum.
    int limit = cfg_.message_recipient_limit - recipient_count_;
    if (limit < m.rcpt_limit) limit = m.rcpt_limit;
    return std::clamp(limit, 1, max_batch);
}

int Scheduler::reread_limit(const Message& m) const {
    // Only the recipient slots the message holds and does not use: its
    // jobs' places in the job lists decide how many it may have in core.
    int limit = m.rcpt_limit - m.rcpt_count;
    if (limit <= 0) panic(m.id + ": no recipient slots available");
    return std::min(limit, max_batch);
}

Transport& Scheduler::transport(const std::string& name) {
    auto& slot = transports_[name];
    if (!slot) {
        slot = std::make_unique<Transport>();
        slot->name = name;
        slot->cfg = transport_cfg_(name);
        auto& c = slot->cfg;
        if (c.dest_rate_delay > 0) c.dest_concurrency_limit = 1;
        if (c.dest_concurrency_limit > 0 && c.init_dest_concurrency > c.dest_concurrency_limit)
            c.init_dest_concurrency = c.dest_concurrency_limit;
        if (c.init_dest_concurrency < 1) c.init_dest_concurrency = 1;
        slot->slot_loan_factor = 100 - std::clamp(c.slot_discount, 0, 100);
        slot->rcpt_unused = c.recipient_limit;
        slot->rcpt_per_stack = c.extra_recipient_limit;
        admin_apply(*slot);
        // New transports are tried first, as in stock.
        transport_rr_.push_front(*slot);
        trace([&] {
            return "qmgr_transport_create: " + name + " concurrency " +
                   std::to_string(c.dest_concurrency_limit) + " recipients " +
                   std::to_string(c.dest_recipient_limit);
        });
    }
    return *slot;
}

Queue& Scheduler::queue_for(Transport& t, const std::string& name, const std::string& nexthop) {
    auto retry_queue = [&](const Dsn& dsn) -> Queue& {
        Transport& rt = transport(cfg_.retry_transport);
        std::string qn = dsn.status + " " + dsn.reason;
        auto it = rt.queue_by_name.find(qn);
        if (it != rt.queue_by_name.end()) return *it->second;
        return queue_create(rt, qn, qn);
    };
    if (t.dead) return retry_queue(*t.dsn);
    auto it = t.queue_by_name.find(name);
    if (it != t.queue_by_name.end()) {
        if (it->second->dead()) return retry_queue(*it->second->dsn);
        return *it->second;
    }
    return queue_create(t, name, nexthop);
}

Queue* Scheduler::route(Transport& t, const std::string& name, const std::string& nexthop,
                        Dsn& reason, bool flush_each) {
    const std::optional<Dsn>* why = nullptr;
    auto it = t.queue_by_name.find(name);
    // A message flushed on its own (postqueue -i/-s) brings its dead
    // transport and destination back first, as stock qmgr does while it
    // resolves such a message.
    if (flush_each) {
        if (t.dead) {
            transport_unthrottle(t);
            driver_.wakeup();
        }
        if (it != t.queue_by_name.end() && it->second->dead()) queue_unthrottle(*it->second);
    }
    if (t.dead)
        why = &t.dsn;
    else if (it != t.queue_by_name.end() && it->second->dead())
        why = &it->second->dsn;
    if (why) {
        if (!*why) panic("route: dead " + t.name + "/" + name + " without a reason");
        Transport& rt = transport(cfg_.retry_transport);
        auto rit = rt.queue_by_name.find((*why)->status + " " + (*why)->reason);
        if (rt.dead || (rit != rt.queue_by_name.end() && rit->second->dead())) {
            reason = **why;
            return nullptr;
        }
    }
    return &queue_for(t, name, nexthop);
}

void Scheduler::assign(Message& m, Queue& q, Recipient r) {
    if (q.dead()) panic("assign: queue " + q.name + " is dead");
    Job& j = job_obtain(m, *q.transport);
    Peer& p = peer_obtain(j, q);
    int limit = q.transport->cfg.dest_recipient_limit;
    if (m.single_rcpt) limit = 1;
    // Fill the peer's newest waiting entry before starting another.
    Entry* e = p.entries.empty() ? nullptr : &p.entries.back();
    if (!e || (limit > 0 && static_cast<int>(e->rcpts.size()) >= limit)) e = entry_create(p, m);
    // Doubling, but never past the limit: a full entry of 50 recipients
    // has room for 50, not 64 (a fifth of all recipient memory).
    auto& v = e->rcpts;
    if (limit > 0 && v.size() == v.capacity())
        v.reserve(std::min<size_t>(static_cast<size_t>(limit), std::max<size_t>(1, 2 * v.size())));
    v.push_back(std::move(r));
    peer_hold_update(p);
    m.rcpt_count++;
    j.rcpt_count++;
    recipient_count_++;
}

void Scheduler::batch_done(Message& m, bool has_unread, int rcpt_unread) {
    trace([&] {
        return "qmgr_message_batch_done: " + m.id + ": " + std::to_string(m.rcpt_count) +
               " recipients in core, limit " + std::to_string(m.rcpt_limit) +
               (has_unread ? ", about " + std::to_string(rcpt_unread) + " unread" : ", all read");
    });
    m.has_unread = has_unread;
    m.rcpt_unread = has_unread ? std::max(rcpt_unread, 0) : 0;
    bool was_pending = m.refill_pending;
    m.refill_pending = false;
    m.refill_time = now_;
    if (was_pending) message_hold_update(m);
    // Fully read: the exact needs of every job are known now, so surplus
    // slots go back to the pools (and on to the next job with unread mail).
    if (!has_unread)
        for (Job* j : m.jobs)
            job_move_limits(*j);
    // Jobs held back waiting for this batch may go now (selection resumes
    // at the first of them, or before).  Their maximum entry counts changed
    // with rcpt_unread.
    for (Job* j : m.jobs) {
        Transport& t = *j->transport;
        t.reset_candidate_cache();
        index_refresh(*j);
        job_unblock(*j);
    }
    driver_.wakeup();
}

void Scheduler::message_free(Message& m) {
    if (m.refcount != 0) panic("message_free: " + m.id + " still has entries");
    for (Job* j = m.jobs.release(); j;) {
        Job* next = j->next_job;
        job_free(*j);
        j = next;
    }
}

// ---- selection ----

Transport* Scheduler::select_transport() {
    for (auto it = transport_rr_.begin(); it != transport_rr_.end(); ++it) {
        Transport& t = *it;
        if (t.dead || t.hold || t.rate_locked || t.pending >= max_pending) continue;
        int need = t.pending + 1;
        // Beyond its cap, only urgent mail may use an agent (lanes.cpp).
        bool urgent_only = lane_capped(t);
        for (Queue& q : t.queues_rr) {
            if (!q.may_start()) continue;
            // Entries held back for a refill give an agent nothing to do.
            // A cap or gate below what is in flight gives no room (not less).
            int usable =
                urgent_only ? std::min(q.selectable_count(), q.urgent_todo) : q.selectable_count();
            need -= std::max(0, std::min(q.select_window() - q.busy_count(), usable));
            if (need <= 0) {
                // Rotate: the next search starts after this transport.
                if (std::next(it) != transport_rr_.end())
                    transport_rr_.splice(transport_rr_.end(), transport_rr_, transport_rr_.begin(),
                                         std::next(it));
                t.pending++;
                // A rate-limited transport runs one delivery at a time.
                if (t.cfg.transport_rate_delay > 0) t.rate_locked = true;
                return &t;
            }
        }
    }
    return nullptr;
}

void Scheduler::connection_ready(Transport& t) {
    if (t.pending <= 0) panic("connection_ready: no pending connection on " + t.name);
    t.pending--;
}

void Scheduler::connection_failed(Transport& t, const Dsn& dsn) {
    if (t.pending <= 0) panic("connection_failed: no pending connection on " + t.name);
    t.pending--;
    transport_dead(t, dsn);
}

void Scheduler::transport_unthrottle(Transport& t) {
    // The one place a transport comes back: its revival timer, a delivery
    // that went through, a flush, or a message flushed on its own.
    if (t.dead) {
        if (!t.dsn) panic("transport_unthrottle: transport " + t.name + ": null reason");
        trace([&] { return "qmgr_transport_unthrottle: transport " + t.name; });
        t.dead = false;
        t.dsn.reset();
        t.dead_until = 0; // cancels the revival timer
    }
    t.rate_locked = false;
}

void Scheduler::transport_dead(Transport& t, const Dsn& dsn) {
    trace([&] {
        return "qmgr_transport_throttle: transport " + t.name + ": status: " + dsn.status +
               " reason: " + dsn.reason;
    });
    if (!t.dead) {
        t.dead = true;
        t.dsn = dsn;
        t.dead_until = now_ + cfg_.transport_retry_time;
        timer_add(t.dead_until, Timer{Timer::Kind::transport_revive, t.name, {}});
    }
    // Everything waiting for this transport goes to the retry transport.
    std::vector<Queue*> qs;
    for (Queue& q : t.queues_rr)
        qs.push_back(&q);
    for (Queue* q : qs)
        queue_defer_todo(*q, dsn);
}

void Scheduler::delivery_done(Entry* e, const DeliveryResult& r) {
    Queue& q = *e->queue;
    Transport& t = *q.transport;
    Message& m = *e->message;
    if (r.kind == DeliveryResult::Kind::unavailable) {
        // The entry waits again, and the dead transport hands its waiting
        // entries to retry.
        entry_unselect(e);
        transport_dead(t, transport_unavailable());
        return;
    }
    // A crashed agent defers the message; like stock, it gives the queue no
    // feedback either way (stock's crash status never reaches its throttle
    // test) and it does not revive the transport.
    const Dsn& hop = r.hop;
    if (r.crashed() || r.status != 0) {
        m.flags |= 1;
        if (!r.crashed() && !hop.status.empty()) {
            Dsn dsn{dsn_valid(hop.status) ? hop.status : "4.0.0",
                    std::string(suspended_prefix) +
                        (hop.reason.empty() ? "unknown error" : hop.reason)};
            if (q.ready()) {
                queue_throttle(q, dsn);
                if (q.dead()) queue_defer_todo(q, dsn);
            }
        }
    }
    // A delivery that went through revives its transport and releases the
    // rate lock.  Stock leaves the lock on after a crash, which stalls the
    // transport for good; we release it then too.
    if (!r.crashed()) {
        transport_unthrottle(t);
        if (r.hop.reason.empty() && (q.ready() || q.dead())) queue_unthrottle(q);
    } else {
        t.rate_locked = false;
    }
    entry_done(e, Which::busy, r.unseen);
    driver_.wakeup();
}

void Scheduler::entry_unselect(Entry* e) {
    Queue& q = *e->queue;
    Peer& p = *e->peer;
    // Stock's order: last on the queue's list, first on the peer's, so that
    // the job sends it next and new recipients still fill the peer's last
    // entry.
    q.busy.erase(q.busy.iterator_to(*e));
    lane_busy(*e, -1);
    q.todo.push_back(*e);
    lane_todo(*e, 1);
    p.entries.push_front(*e);
    peer_hold_update(p);
    p.job->selected_entries--;
    p.job->in_flight--;
    index_refresh(*p.job);
    // The job may have been retired when this was its last entry.
    if (p.job->stack_level < 0) job_obtain(*e->message, *q.transport);
}

// ---- administration ----

void Scheduler::flush_dead() {
    for (Transport& t : transport_rr_) {
        // Only a dead transport is revived; a live one keeps its rate lock
        // while its delivery is under way, as in stock.
        if (t.dead) transport_unthrottle(t);
        std::vector<Queue*> dead;
        for (Queue& q : t.queues_rr)
            if (q.dead()) dead.push_back(&q);
        for (Queue* q : dead)
            queue_revive(*q);
    }
    driver_.wakeup();
}

} // namespace cqmgr::core
