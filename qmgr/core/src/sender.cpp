// Sender groups' limits: one sender's campaign must not take the places a
// destination, or a provider, has for everybody's mail.
//
// Each limited group has one load (SenderLoad) per scope of a transport
// where it has mail: its deliveries in flight and its rate, a local GCRA.
// The scope is a destination, or with a limit `per provider` every queue
// of the queue's provider (Queue::provider, which the driver tells; a
// queue outside every provider is a scope of its own).  On each queue the
// group's mail there is a part (SenderPart) of its load: its waiting
// entries, held ones and deliveries.  A peer of the group's job points at
// its part (Peer::sender), and the part at its load, so that selection
// asks the load in two steps; mail of no group has neither, and costs one
// branch where they are asked.  When a queue's provider changes, its
// parts move to the load of their new scope with their deliveries in
// flight (rescope); a concurrency they take the load beyond is allowed
// until enough of them end (SenderLoad::over).
//
// A group at its limit is passed over as a queue at its window is:
// selection goes on to the next job of the job list (sender_may_start in
// Selection::peer), which may be another sender's mail for the same queue,
// and which then earns the slots; a job whose every waiting entry is
// stopped so is marked a blocker (Jobs::block), and the search for a
// preempting job passes it over without spending the current job's slots
// on it (Jobs::preempt).  The load, not the queue, frees such a blocker:
// when a delivery of the group ends, or its rate's timer fires, and a job
// was passed over for it, its transport's blockers go (ended, fire).
// select_transport() and destination_waits() do not count waiting entries
// that a load stops (sender_stopped); select_transport() counts the room
// of a load of several queues once in all, not once per queue (lend), so
// that no agent is asked for that only such mail could use.
//
// The rate is counted per group and scope on this host only, as the
// generic cell-rate algorithm of cluster/gcra.hpp counts it, on the core's
// clock of seconds: a start in the second from `now` is allowed while the
// theoretical arrival time (TAT) less the burst allowance falls before that
// second ends, and moves TAT one interval on (gcra_room).  After each start the load keeps how many
// more starts the rate allows (rate_room); when that is none, a timer at
// the second it allows one again gives it back.  A load whose last part
// went stays while its TAT is ahead of the clock, so that the next message
// of a campaign of one-recipient messages finds the rate where the last one
// left it; its timer frees it when the TAT has passed.
#include "core.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

namespace cqmgr::core {

namespace {
// Rounding slack of the rate's arithmetic (seconds): a start due exactly
// on a second is never refused by a rounding error.
constexpr double slack = 1e-9;
} // namespace

std::string sender_scope_key(SenderGroup g, const Queue& q, SenderPer per) {
    if (per == SenderPer::provider && q.provider != 0)
        return std::to_string(g) + " #" + std::to_string(q.provider);
    return std::to_string(g) + " " + q.name;
}

int gcra_room(double tat, int64_t now, double interval, int64_t burst) {
    const double t = static_cast<double>(now);
    // Starts k = 1, 2, ... are allowed while the k-th one's virtual time,
    // max(tat, now) + (k - 1 - (burst - 1)) * interval, is before now + 1.
    double x = (t + 1 - std::max(tat, t)) / interval + static_cast<double>(burst);
    double n = std::ceil(x - slack) - 1;
    // A burst beyond what an int counts is as good as no bound on it.
    return static_cast<int>(std::clamp(n, 0.0, static_cast<double>(INT_MAX)));
}

void Senders::set_limit(SenderGroup g, const SenderLimit& limit) {
    if (g == 0) panic("set_sender_limit: group 0 is no group");
    if (limit.rate_count > 0 && (limit.rate_period_ms <= 0 || limit.rate_burst <= 0))
        panic("set_sender_limit: group " + std::to_string(g) + ": bad rate");
    if (limits_.size() <= g) limits_.resize(static_cast<size_t>(g) + 1);
    // Loads keep a copy: a group's limit is set once, for the daemon's life.
    if (limits_[g].any() && limits_[g] != limit)
        panic("set_sender_limit: group " + std::to_string(g) + " has another limit");
    if (!limits_[g].any() && limit.any() && limited(g))
        panic("set_sender_limit: group " + std::to_string(g) + " had a rule before its limit");
    limits_[g] = limit;
    if (limited_.size() <= g) limited_.resize(static_cast<size_t>(g) + 1);
    limited_[g] = limit.any() || (g < ruled_.size() && ruled_[g]);
    // The first limit per provider: the queues that exist learn their
    // provider now, those born from now on at their birth, and changes
    // come from the driver (set_queue_provider).  No part of a group per
    // provider exists yet, so none moves.
    if (limit.any() && limit.per == SenderPer::provider && !by_provider_) {
        by_provider_ = true;
        for (const auto& [name, t] : c_.transports.all())
            for (const auto& [qn, q] : t->queue_by_name)
                q->provider = c_.driver.queue_provider(*q);
    }
}

namespace {
// A free number of `items` (1-based; a freed one first) for a new item,
// its place made.
template <class T>
uint32_t take_number(std::vector<std::unique_ptr<T>>& items, std::vector<uint32_t>& free) {
    if (free.empty()) {
        items.emplace_back();
        return static_cast<uint32_t>(items.size());
    }
    uint32_t number = free.back();
    free.pop_back();
    return number;
}
} // namespace

uint32_t Senders::load_obtain(Transport& t, SenderGroup g, const std::string& key) {
    SenderBook& book = t.senders;
    auto [it, made] = book.by_key.try_emplace(key, 0);
    if (!made) return it->second;
    uint32_t number = take_number(book.loads, book.free);
    auto l = std::make_unique<SenderLoad>();
    l->group = g;
    l->limit = limits_[g];
    l->key = key;
    if (l->limit.rate_count > 0)
        l->rate_room = gcra_room(0, c_.now, l->limit.interval(), l->limit.rate_burst);
    book.loads[number - 1] = std::move(l);
    it->second = number;
    return number;
}

SenderPart* Senders::part_of(const Queue& q, SenderGroup g) const {
    // A queue holds mail of few groups: its parts are searched in turn.
    const SenderBook& book = q.transport->senders;
    for (const SenderPart& part : q.senders)
        if (book.at(part.load).group == g) return const_cast<SenderPart*>(&part);
    return nullptr;
}

void Senders::attach(Peer& p) {
    SenderGroup g = p.job->message->sender_group;
    if (!limited(g)) return;
    Transport& t = *p.job->transport;
    if (t.name == c_.cfg.retry_transport) return;
    Queue& q = *p.queue;
    SenderBook& book = t.senders;
    SenderPart* part = part_of(q, g);
    if (!part) {
        uint32_t number = take_number(book.parts, book.free_parts);
        book.parts[number - 1] = std::make_unique<SenderPart>();
        part = book.parts[number - 1].get();
        part->number = number;
        part->queue = &q;
        if (!rules_.empty()) part->rule = rule_for(t.name, q.name, g);
        q.senders.push_back(*part);
        join(t, *part, load_obtain(t, g, sender_scope_key(g, q, limits_[g].per)));
    }
    part->peers++;
    p.sender = part->number;
    // A peer made while its group had neither limit nor rule brings its
    // entries (adopt); a new one has none.
    const int todo = static_cast<int>(p.entries.size());
    const int busy = p.refcount - todo;
    if (todo == 0 && busy == 0) return;
    part->todo += todo;
    part->held += p.held != nullptr;
    part->busy += busy;
    q.sender_todo += todo;
    SenderLoad& l = book.at(part->load);
    l.busy += busy;
    if (l.limit.concurrency > 0 && l.busy > l.limit.concurrency) l.over = true;
}

void Senders::join(Transport& t, SenderPart& part, uint32_t number) {
    SenderLoad& l = t.senders.at(number);
    part.load = number;
    l.parts++;
    l.busy += part.busy;
    if (l.limit.concurrency > 0 && l.busy > l.limit.concurrency) l.over = true;
}

void Senders::leave(Transport& t, SenderPart& part) {
    SenderLoad& l = t.senders.at(part.load);
    part.load = 0;
    l.busy -= part.busy;
    if (l.over && l.busy <= l.limit.concurrency) l.over = false;
    if (--l.parts > 0) {
        regained(t, l);
        return;
    }
    l.blocked = false;
    // The rate remembers recent starts until its TAT has passed.
    if (l.limit.rate_count > 0 && l.tat > static_cast<double>(c_.now) + slack)
        arm(t, l, static_cast<int64_t>(std::ceil(l.tat - slack)));
    else
        release(t, l);
}

void Senders::detach(Peer& p) {
    Transport& t = *p.job->transport;
    SenderPart& part = sender_part(p);
    p.sender = 0;
    if (--part.peers > 0) return;
    if (part.todo || part.held || part.busy)
        panic("sender part of " + t.senders.at(part.load).key + " on " + part.queue->name +
              " freed while in use");
    part.queue->senders.erase(part.queue->senders.iterator_to(part));
    leave(t, part);
    part_free(t, part.number);
}

void Senders::part_free(Transport& t, uint32_t number) {
    t.senders.parts[number - 1].reset();
    t.senders.free_parts.push_back(number);
}

void Senders::release(Transport& t, SenderLoad& l) {
    if (l.parts || l.busy) panic("sender load " + l.key + " released while in use");
    SenderBook& book = t.senders;
    auto it = book.by_key.find(l.key);
    uint32_t number = it->second;
    book.by_key.erase(it);
    book.loads[number - 1].reset();
    book.free.push_back(number);
}

void Senders::started(const Peer& p) {
    SenderPart& part = sender_part(p);
    SenderLoad& l = sender_load(p);
    if (l.room() <= 0) panic("sender load " + l.key + ": a start beyond its limit");
    if (part.rule_room() <= 0)
        panic("sender part on " + p.queue->name + " of " + l.key + ": a start beyond its rule");
    part.todo--;
    part.busy++;
    p.queue->sender_todo--;
    l.busy++;
    if (l.limit.rate_count > 0) {
        l.tat = std::max(l.tat, static_cast<double>(c_.now)) + l.limit.interval();
        rate_update(*p.job->transport, l);
    }
}

void Senders::ended(const Peer& p, bool seen) {
    SenderPart& part = sender_part(p);
    SenderLoad& l = sender_load(p);
    part.busy--;
    l.busy--;
    if (l.over && l.busy <= l.limit.concurrency) l.over = false;
    regained(*p.job->transport, l);
    if (part.rule) rule_ended(*p.job->transport, part, seen);
}

void Senders::regained(Transport& t, SenderLoad& l) {
    if (l.blocked && l.room() > 0) {
        l.blocked = false;
        c_.jobs.unblock_all(t);
    }
}

bool Senders::job_stopped(const Job& j) const {
    bool stopped = false;
    for (const Peer& p : j.peers) {
        if (p.entries.empty()) continue;
        if (!p.sender) return false;
        const SenderPart& part = sender_part(p);
        if (part.room(p.job->transport->senders.at(part.load)) > 0) return false;
        stopped = true;
    }
    // Each load or rule that stops it remembers so.
    if (stopped)
        for (const Peer& p : j.peers)
            if (!p.entries.empty()) sender_may_start(p);
    return stopped;
}

void Senders::rescope(Queue& q, uint32_t provider) {
    if (q.provider == provider) return;
    q.provider = provider;
    Transport& t = *q.transport;
    bool moved = false;
    for (SenderPart& part : q.senders) {
        SenderLoad& old = t.senders.at(part.load);
        if (old.limit.per != SenderPer::provider) continue;
        SenderGroup g = old.group;
        std::string key = sender_scope_key(g, q, SenderPer::provider);
        if (key == old.key) continue;
        leave(t, part);
        join(t, part, load_obtain(t, g, key));
        moved = true;
    }
    if (!moved) return;
    // The new scopes may have room where the old had none, or none where
    // the old had some: the job walk looks again.
    c_.jobs.unblock_all(t);
    c_.driver.wakeup();
}

int Senders::stopped_in_pass(const Queue& q, uint32_t pass) const {
    int n = 0;
    const SenderBook& b = q.transport->senders;
    for (const SenderPart& part : q.senders) {
        const SenderLoad& l = b.at(part.load);
        n += part.stopped(part.room(l, l.parts > 1 && l.pass == pass ? l.lent : 0));
    }
    return n;
}

void Senders::lend(const Queue& q, uint32_t pass, int counted, int selectable) {
    const SenderBook& b = q.transport->senders;
    // What the loads of several queues could give here; the entries of the
    // queue's other mail are counted first.
    int shared = 0;
    for (const SenderPart& part : q.senders)
        if (const SenderLoad& l = b.at(part.load); l.parts > 1) {
            int room = part.room(l, l.pass == pass ? l.lent : 0);
            shared += std::max(0, part.todo - part.held - part.stopped(room));
        }
    int excess = counted - (selectable - shared);
    for (const SenderPart& part : q.senders) {
        if (excess <= 0) return;
        SenderLoad& l = b.at(part.load);
        if (l.parts <= 1) continue;
        if (l.pass != pass) l.pass = pass, l.lent = 0;
        int take = std::min(
            excess, std::max(0, part.todo - part.held - part.stopped(part.room(l, l.lent))));
        l.lent += take;
        excess -= take;
    }
}

void Senders::rate_update(Transport& t, SenderLoad& l) {
    const SenderLimit& r = l.limit;
    l.rate_room = gcra_room(l.tat, c_.now, r.interval(), r.rate_burst);
    if (l.rate_room > 0) return;
    // The first second in which one more start fits in the burst allowance:
    // the first whose end is past that start's virtual time.
    double at = l.tat - r.interval() * static_cast<double>(r.rate_burst - 1);
    arm(t, l, static_cast<int64_t>(std::floor(at - 1 + slack)) + 1);
}

void Senders::arm(Transport& t, SenderLoad& l, int64_t due) {
    // Never now or before: set_time() would fire it again at once.
    due = std::max(due, c_.now + 1);
    if (l.timer_due && l.timer_due <= due) return;
    l.timer_due = due;
    c_.timers.add(due, Timer{Timer::Kind::sender, t.name, l.key});
}

void Senders::fire(Transport& t, const std::string& key, int64_t due) {
    auto it = t.senders.by_key.find(key);
    if (it == t.senders.by_key.end()) return;
    SenderLoad& l = t.senders.at(it->second);
    if (l.timer_due != due) return;
    l.timer_due = 0;
    rate_update(t, l);
    if (!l.parts) {
        if (l.tat > static_cast<double>(c_.now) + slack)
            arm(t, l, static_cast<int64_t>(std::ceil(l.tat - slack)));
        else
            release(t, l);
        return;
    }
    regained(t, l);
    c_.driver.wakeup();
}

} // namespace cqmgr::core
