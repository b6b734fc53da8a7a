// Transports: creation, the choice of a transport for the next agent, dead
// transports and their revival, the rate lock.
#include "transports.hpp"

#include "core.hpp"

#include <algorithm>

namespace cqmgr::core {

namespace {
// Stock qmgr lets a transport have this many connections that no agent has
// announced itself on yet.
constexpr int max_pending = 2;
} // namespace

Transports::Transports(Core& c, Scheduler::TransportConfigFn transport_cfg)
    : c_(c), transport_cfg_(std::move(transport_cfg)) {}

Transports::~Transports() {
    // Unlink everything before the owning maps destroy the objects, so the
    // safe-mode hooks do not complain about objects dying while linked.
    rr_.clear();
    for (auto& [name, t] : by_name_) {
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
            q->senders.clear();
        }
    }
}

Transport& Transports::obtain(const std::string& name) {
    auto& slot = by_name_[name];
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
        c_.limits.apply(*slot);
        // New transports are tried first, as in stock.
        rr_.push_front(*slot);
        c_.trace([&] {
            return "qmgr_transport_create: " + name + " concurrency " +
                   std::to_string(c.dest_concurrency_limit) + " recipients " +
                   std::to_string(c.dest_recipient_limit);
        });
    }
    return *slot;
}

Transport* Transports::find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second.get();
}

Transport* Transports::select() {
    // Sender loads of several queues count their room once (Senders::lend).
    const uint32_t pass = c_.senders.begin_pass();
    for (auto it = rr_.begin(); it != rr_.end(); ++it) {
        Transport& t = *it;
        if (t.dead || t.hold || t.rate_locked || t.pending >= max_pending) continue;
        int need = t.pending + 1;
        // Beyond its cap, only urgent mail may use an agent while some
        // waits for one (lanes.cpp).
        bool urgent_only = lane_reserve_binds(t);
        ShareDemand demand; // share_room: computed once per transport
        c_.jobs.share_update(t, demand);
        for (Queue& q : t.queues_rr) {
            if (!q.may_start()) continue;
            // Entries held back for a refill give an agent nothing to do.
            // A cap or gate below what is in flight gives no room (not less).
            int selectable = q.selectable_count();
            // Mail that its sender group's limit stops gives an agent nothing.
            if (q.sender_todo) selectable -= c_.senders.stopped_in_pass(q, pass);
            int usable = urgent_only ? std::min(selectable, q.urgent_todo) : selectable;
            int counted = std::max(0, std::min(share_room(q, demand), usable));
            if (q.sender_todo) c_.senders.lend(q, pass, counted, selectable);
            need -= counted;
            if (need <= 0) {
                // Rotate: the next search starts after this transport.
                if (std::next(it) != rr_.end())
                    rr_.splice(rr_.end(), rr_, rr_.begin(), std::next(it));
                t.pending++;
                // A rate-limited transport runs one delivery at a time.
                if (t.cfg.transport_rate_delay > 0) t.rate_locked = true;
                return &t;
            }
        }
    }
    return nullptr;
}

void Transports::unthrottle(Transport& t) {
    // The one place a transport comes back: its revival timer, a delivery
    // that went through, a flush, or a message flushed on its own.
    if (t.dead) {
        if (!t.dsn) panic("transport_unthrottle: transport " + t.name + ": null reason");
        c_.trace([&] { return "qmgr_transport_unthrottle: transport " + t.name; });
        t.dead = false;
        t.dsn.reset();
        t.dead_until = 0; // cancels the revival timer
    }
    t.rate_locked = false;
}

void Transports::dead(Transport& t, const Dsn& dsn) {
    c_.trace([&] {
        return "qmgr_transport_throttle: transport " + t.name + ": status: " + dsn.status +
               " reason: " + dsn.reason;
    });
    if (!t.dead) {
        t.dead = true;
        t.dsn = dsn;
        t.dead_until = c_.now + c_.cfg.transport_retry_time;
        c_.timers.add(t.dead_until, Timer{Timer::Kind::transport_revive, t.name, {}});
    }
    // Everything waiting for this transport goes to the retry transport.
    std::vector<Queue*> qs;
    for (Queue& q : t.queues_rr)
        qs.push_back(&q);
    for (Queue* q : qs)
        c_.queues.defer_todo(*q, dsn);
}

void Transports::flush_dead() {
    for (Transport& t : rr_) {
        // Only a dead transport is revived; a live one keeps its rate lock
        // while its delivery is under way, as in stock.
        if (t.dead) unthrottle(t);
        std::vector<Queue*> dead;
        for (Queue& q : t.queues_rr)
            if (q.dead()) dead.push_back(&q);
        for (Queue* q : dead)
            c_.queues.revive(*q);
    }
    c_.driver.wakeup();
}

} // namespace cqmgr::core
