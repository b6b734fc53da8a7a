// Runtime control: the administrator's suspensions and concurrency caps,
// and the flush of one destination.
//
// The settings live in two maps by target, so that they outlast the queues
// they cover: an empty queue is let go as usual, and the queue created for
// the next recipient picks its setting up again (as does a queue created
// after a restart, when the settings were loaded before any mail).  Each
// transport and queue carries a copy of what covers it, which is what
// selection reads: the maps are consulted only when a queue or transport is
// created and when a setting changes.
#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

namespace {

// The setting in `m` that covers queue `queue` of transport `transport`:
// its own, else the one for its name on any transport.
template <class Map>
std::optional<typename Map::mapped_type> covering(const Map& m, const std::string& transport,
                                                  const std::string& queue) {
    if (m.empty() || queue.empty()) return std::nullopt;
    auto it = m.find(AdminTarget{transport, queue});
    if (it == m.end()) it = m.find(AdminTarget{{}, queue});
    if (it == m.end()) return std::nullopt;
    return it->second;
}

// The suspension of the whole transport `transport`, if any.
std::optional<AdminHold> transport_hold(const std::map<AdminTarget, AdminHold>& holds,
                                        const std::string& transport) {
    auto it = holds.find(AdminTarget{transport, {}});
    if (it == holds.end()) return std::nullopt;
    return it->second;
}

// Sets `map[target]` to `value`; false when it had that value already.
template <class Map>
bool replace(Map& map, const AdminTarget& target, const typename Map::mapped_type& value) {
    auto [it, fresh] = map.try_emplace(target, value);
    if (fresh) return true;
    if (it->second == value) return false;
    it->second = value;
    return true;
}

} // namespace

// Gives transport `t` the copy of its suspension.
void Scheduler::admin_apply(Transport& t) {
    t.hold = transport_hold(holds_, t.name);
}

// Gives queue `q` the copies of its suspension, cap, learned limit and
// destination share.
void Scheduler::admin_apply(Queue& q) {
    q.hold = covering(holds_, q.transport->name, q.name);
    q.cap = covering(caps_, q.transport->name, q.name);
    q.learned = learned_for(q.transport->name, q.name);
    q.share = share_for(*q.transport, q.name);
}

std::vector<Queue*> Scheduler::admin_queues(const AdminTarget& target) const {
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
        for (const auto& [name, t] : transports_)
            add(*t);
    } else if (auto it = transports_.find(target.transport); it != transports_.end()) {
        add(*it->second);
    }
    return out;
}

// A setting of `target` was set (or replaced): its end, if it has one, is
// timed (a replaced setting's old timer finds a different `until` and does
// nothing), and it takes effect.
void Scheduler::admin_started(Timer::Kind kind, const AdminTarget& target, int64_t until) {
    if (until != 0) timer_add(until, Timer{kind, target.transport, target.queue});
    admin_changed(target);
}

// A setting of `target` changed: renew the copies it covers, let jobs that
// were waiting for those queues go again, and wake the driver.
void Scheduler::admin_changed(const AdminTarget& target) {
    if (target.whole_transport()) {
        if (auto it = transports_.find(target.transport); it != transports_.end())
            admin_apply(*it->second);
    } else {
        for (Queue* q : admin_queues(target)) {
            admin_apply(*q);
            job_blocker_update(*q);
        }
    }
    driver_.wakeup();
}

bool Scheduler::admin_suspend(const AdminTarget& target, const AdminHold& hold) {
    if (target.transport.empty() && target.queue.empty()) panic("admin_suspend: empty target");
    if (!replace(holds_, target, hold)) return false;
    trace([&] { return "admin_suspend: " + target.text(); });
    admin_started(Timer::Kind::hold_expire, target, hold.until);
    return true;
}

bool Scheduler::admin_resume(const AdminTarget& target) {
    if (holds_.erase(target) == 0) return false;
    trace([&] { return "admin_resume: " + target.text(); });
    admin_changed(target);
    return true;
}

bool Scheduler::admin_throttle(const AdminTarget& target, const AdminCap& cap) {
    if (target.queue.empty()) panic("admin_throttle: no queue in target " + target.text());
    if (cap.concurrency < 1)
        panic("admin_throttle: concurrency " + std::to_string(cap.concurrency));
    if (!replace(caps_, target, cap)) return false;
    trace([&] {
        return "admin_throttle: " + target.text() + " concurrency " +
               std::to_string(cap.concurrency);
    });
    admin_started(Timer::Kind::cap_expire, target, cap.until);
    return true;
}

bool Scheduler::admin_unthrottle(const AdminTarget& target) {
    if (caps_.erase(target) == 0) return false;
    trace([&] { return "admin_unthrottle: " + target.text(); });
    admin_changed(target);
    return true;
}

// A suspension or cap timer is due: the setting ends unless it was
// replaced or removed since the timer was set.
void Scheduler::admin_expire(AdminKind kind, const AdminTarget& target, int64_t due) {
    auto end = [&](auto& map) {
        auto it = map.find(target);
        if (it == map.end() || it->second.until != due) return false;
        map.erase(it);
        return true;
    };
    if (!(kind == AdminKind::hold ? end(holds_) : end(caps_))) return;
    driver_.admin_expired(kind, target);
    admin_changed(target);
}

std::vector<AdminTarget> Scheduler::admin_flush(const AdminTarget& target) {
    std::vector<AdminTarget> revived;
    // A named transport comes back first, so that its queue can be used.
    if (!target.any_transport())
        if (auto it = transports_.find(target.transport);
            it != transports_.end() && it->second->dead) {
            transport_unthrottle(*it->second);
            revived.push_back({target.transport, {}});
        }
    for (Queue* q : admin_queues(target))
        if (q->dead()) {
            revived.push_back({q->transport->name, q->name});
            queue_revive(*q); // may free q
        }
    driver_.wakeup();
    return revived;
}

// Checks the copies against the settings, and that each setting that ends
// by itself has its timer.
void Scheduler::check_admin() const {
    auto fail = [](const std::string& what) { panic("invariant: admin: " + what); };
    for (const auto& [name, tp] : transports_) {
        const Transport& t = *tp;
        if (t.hold != transport_hold(holds_, name)) fail(name + ": stale suspension copy");
        for (const auto& [qn, qp] : t.queue_by_name) {
            if (qp->hold != covering(holds_, name, qn))
                fail(name + "/" + qn + ": stale suspension");
            if (qp->cap != covering(caps_, name, qn)) fail(name + "/" + qn + ": stale cap");
            if (qp->learned != learned_for(name, qn))
                fail(name + "/" + qn + ": stale learned limit");
            if (qp->share != share_for(t, qn)) fail(name + "/" + qn + ": stale share");
        }
    }
    auto timed = [&](Timer::Kind kind, const AdminTarget& target, int64_t until) {
        if (until == 0) return;
        if (until <= now_) fail(target.text() + ": outlived its end");
        auto [lo, hi] = timers_.equal_range(until);
        for (auto it = lo; it != hi; ++it)
            if (it->second.kind == kind && it->second.transport == target.transport &&
                it->second.queue == target.queue)
                return;
        fail(target.text() + ": no timer for its end");
    };
    for (const auto& [target, hold] : holds_) {
        if (target.transport.empty() && target.queue.empty()) fail("suspension without a target");
        timed(Timer::Kind::hold_expire, target, hold.until);
    }
    for (const auto& [target, cap] : caps_) {
        if (target.queue.empty()) fail(target.text() + ": cap without a queue");
        if (cap.concurrency < 1) fail(target.text() + ": cap below 1");
        timed(Timer::Kind::cap_expire, target, cap.until);
    }
    for (const auto& [target, limit] : learned_)
        if (!limit.any() || target.transport.empty() || target.queue.empty())
            fail(target.text() + ": empty or untargeted learned limit");
    for (const auto& [target, agents] : shares_)
        if (agents < 1 || target.transport.empty() || target.queue.empty())
            fail(target.text() + ": empty or untargeted lowered share");
}

} // namespace cqmgr::core
