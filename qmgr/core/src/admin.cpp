// Runtime control: the bounds the features place on transports and queues
// (limits.hpp), and the flush of one destination.
//
// The bounds other than the driver's gates are kept by name (LimitBook),
// so that they outlast the queues they cover.  Each transport and queue
// carries a copy of what covers it, which is what selection reads: the
// book is consulted only when a queue or transport is created and when a
// setting changes.
#include "core.hpp"

namespace cqmgr::core {

// Gives transport `t` the copy of its suspension.
void LimitControl::apply(Transport& t) {
    t.hold = book_.transport_hold(t.name);
}

// Gives queue `q` the copies of what the book keeps for it; its gate is
// its own.  The one place a queue's bounds are set from the book.
void LimitControl::apply(Queue& q) {
    std::optional<int> gate = q.limits.gate;
    q.limits = book_.covering(q.transport->name, q.name, share_full(*q.transport));
    q.limits.gate = gate;
}

std::vector<Queue*> LimitControl::queues(const AdminTarget& target) const {
    std::vector<Queue*> out;
    auto add = [&](Transport& t) {
        if (target.whole_transport()) {
            for (Queue& q : t.queues_rr)
                out.push_back(&q);
        } else if (auto it = t.queue_by_name.find(target.queue); it != t.queue_by_name.end()) {
            out.push_back(it->second.get());
        }
    };
    if (target.any_transport()) {
        for (const auto& [name, t] : c_.transports.all())
            add(*t);
    } else if (Transport* t = c_.transports.find(target.transport)) {
        add(*t);
    }
    return out;
}

namespace {

// The timer that ends a setting of bound `which` by itself.
Timer::Kind expiry_kind(Bound which) {
    return which == Bound::hold      ? Timer::Kind::hold_expire
           : which == Bound::cap     ? Timer::Kind::cap_expire
           : which == Bound::learned ? Timer::Kind::learned_expire
                                     : Timer::Kind::rule_expire;
}

// The line -v logs for `change` of `target`.
std::string change_text(const AdminTarget& target, const LimitChange& change) {
    const Limits& value = change.value;
    switch (change.which) {
    case Bound::hold:
        return (value.hold ? "admin_suspend: " : "admin_resume: ") + target.text();
    case Bound::cap:
        return value.cap ? "admin_throttle: " + target.text() + " concurrency " +
                               std::to_string(value.cap->concurrency)
                         : "admin_unthrottle: " + target.text();
    case Bound::learned:
        return "learned_set: " + target.text() + " concurrency " +
               std::to_string(value.learned.concurrency) + " rate delay " +
               std::to_string(value.learned.rate_delay) +
               (value.learned.held_until != 0
                    ? " held until " + std::to_string(value.learned.held_until)
                    : "");
    case Bound::share:
        return "share_set: " + target.text() + " " + std::to_string(value.share);
    case Bound::rule:
        return value.rule ? "rule_set: " + target.text() + (value.rule->hold ? " hold" : "") +
                                " concurrency " + std::to_string(value.rule->concurrency) +
                                " pause " + std::to_string(value.rule->pause)
                          : "rule_end: " + target.text();
    case Bound::gate:
        break;
    }
    return "gate_set: " + target.text();
}

} // namespace

bool LimitControl::set(const AdminTarget& target, const LimitChange& change) {
    const Bound which = change.which;
    const Limits& value = change.value;
    if (which == Bound::gate) {
        if (target.any_transport() || target.whole_transport()) return false;
        Queue* q = c_.queues.find(target.transport, target.queue);
        return q && set(*q, change);
    }
    if (!book_.set(target, change)) return false;
    c_.trace([&] { return change_text(target, change); });
    // A hold, a cap, a rule's action or a learned hold that ends by itself
    // is timed (a replaced setting's old timer finds a different `until`
    // and does nothing).
    int64_t until = which == Bound::hold && value.hold   ? value.hold->until
                    : which == Bound::cap && value.cap   ? value.cap->until
                    : which == Bound::rule && value.rule ? value.rule->until
                    : which == Bound::learned            ? value.learned.held_until
                                                         : 0;
    if (until != 0) c_.timers.add(until, Timer{expiry_kind(which), target.transport, target.queue});
    changed(target, which);
    return true;
}

bool LimitControl::set(Queue& q, const LimitChange& change) {
    if (change.which != Bound::gate) return set(AdminTarget{q.transport->name, q.name}, change);
    if (q.limits.gate == change.value.gate) return false;
    q.limits.gate = change.value.gate;
    c_.jobs.blocker_update(q);
    c_.driver.wakeup();
    return true;
}

// A setting of `target` changed: renew the copies it covers, let jobs that
// were waiting for those queues go again, and wake the driver.  A rule's
// action on a whole transport is copied to each of its queues; the
// administrator's suspension of one is the transport's own.
void LimitControl::changed(const AdminTarget& target, Bound which) {
    if (target.whole_transport() && which != Bound::rule) {
        if (Transport* t = c_.transports.find(target.transport)) apply(*t);
    } else {
        for (Queue* q : queues(target)) {
            apply(*q);
            c_.jobs.blocker_update(*q);
        }
    }
    c_.driver.wakeup();
}

// A suspension, cap, rule's or learned hold's timer is due: the setting
// ends unless it was replaced or removed since the timer was set.  The
// driver hears of the ends of the first three (a learned hold is the
// daemon's own count, which knows the time it ends).
void LimitControl::expire(Bound which, const AdminTarget& target, int64_t due) {
    if (!book_.expire(which, target, due)) return;
    if (which != Bound::learned)
        c_.driver.admin_expired(which == Bound::hold  ? AdminKind::hold
                                : which == Bound::cap ? AdminKind::cap
                                                      : AdminKind::rule,
                                target);
    changed(target, which);
}

std::vector<AdminTarget> LimitControl::flush(const AdminTarget& target) {
    std::vector<AdminTarget> revived;
    // A named transport comes back first, so that its queue can be used.
    if (!target.any_transport())
        if (Transport* t = c_.transports.find(target.transport); t && t->dead) {
            c_.transports.unthrottle(*t);
            revived.push_back({target.transport, {}});
        }
    for (Queue* q : queues(target))
        if (q->dead()) {
            revived.push_back({q->transport->name, q->name});
            c_.queues.revive(*q); // may free q
        }
    c_.driver.wakeup();
    return revived;
}

// Checks the copies against the settings, and that each setting that ends
// by itself has its timer.
void LimitControl::check() const {
    auto fail = [](const std::string& what) { panic("invariant: admin: " + what); };
    book_.check();
    for (const auto& [name, tp] : c_.transports.all()) {
        const Transport& t = *tp;
        if (t.hold != book_.transport_hold(name)) fail(name + ": stale suspension copy");
        for (const auto& [qn, qp] : t.queue_by_name) {
            Limits want = book_.covering(name, qn, share_full(t));
            want.gate = qp->limits.gate;
            if (qp->limits != want) fail(name + "/" + qn + ": stale limits");
        }
    }
    auto timed = [&](Timer::Kind kind, const AdminTarget& target, int64_t until) {
        if (until == 0) return;
        if (until <= c_.now) fail(target.text() + ": outlived its end");
        if (!c_.timers.has(until, kind, target.transport, target.queue))
            fail(target.text() + ": no timer for its end");
    };
    for (const auto& [target, hold] : book_.holds())
        timed(Timer::Kind::hold_expire, target, hold.until);
    for (const auto& [target, cap] : book_.caps())
        timed(Timer::Kind::cap_expire, target, cap.until);
    for (const auto& [target, rule] : book_.rules())
        timed(Timer::Kind::rule_expire, target, rule.until);
    for (const auto& [target, learned] : book_.learned())
        timed(Timer::Kind::learned_expire, target, learned.held_until);
}

} // namespace cqmgr::core
