// Sender groups' limits: one sender's campaign must not take the places a
// destination has for everybody's mail.
//
// Each limited group has one load (SenderLoad) per scope of a transport
// where it has mail: its waiting entries, its deliveries in flight, and
// its rate, a local GCRA.  A peer of the group's job points at the load
// (Peer::sender), so that selection asks it in one step; mail of no group
// has no load, and costs one branch where the load is asked.
//
// A group at its limit on a queue is passed over as a queue at its window
// is: selection goes on to the next job of the job list (sender_may_start
// in Selection::peer), which may be another sender's mail for the same
// queue, and which then earns the slots; a job whose every waiting entry
// is stopped so is marked a blocker (Jobs::block), and the search for a
// preempting job passes it over without spending the current job's slots
// on it (Jobs::preempt).  The load, not the queue, frees such a blocker:
// when a delivery of the group ends, or its rate's timer fires, and a job
// was passed over for it, its transport's blockers go (ended, fire).
// select_transport() and destination_waits() do not count waiting entries
// that a load stops (sender_stopped), so that no agent is asked for that
// only such mail could use.
//
// The rate is counted per group and scope on this host only, as the
// generic cell-rate algorithm of cluster/gcra.hpp counts it, on the core's
// clock of seconds: a start at `now` is allowed while the theoretical
// arrival time (TAT) less the burst allowance is no later than now, and
// moves TAT one interval on.  After each start the load keeps how many
// more starts the rate allows (rate_room); when that is none, a timer at
// the second it allows one again gives it back.  A load whose last peer
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

std::string sender_scope_key(const Queue& q, SenderPer per) {
    (void)per;
    return q.name;
}

int gcra_room(double tat, int64_t now, double interval, int64_t burst) {
    const double t = static_cast<double>(now);
    // A burst beyond what an int counts is as good as no bound on it.
    const double most = static_cast<double>(std::min<int64_t>(burst, INT_MAX));
    if (tat <= t) return static_cast<int>(most);
    double n = std::floor((t - tat) / interval + slack) + static_cast<double>(burst);
    return static_cast<int>(std::clamp(n, 0.0, most));
}

void Senders::set_limit(SenderGroup g, const SenderLimit& limit) {
    if (g == 0) panic("set_sender_limit: group 0 is no group");
    if (limit.rate_count > 0 && (limit.rate_period_ms <= 0 || limit.rate_burst <= 0))
        panic("set_sender_limit: group " + std::to_string(g) + ": bad rate");
    if (limits_.size() <= g) limits_.resize(static_cast<size_t>(g) + 1);
    // Loads keep a copy: a group's limit is set once, for the daemon's life.
    if (limits_[g].any() && limits_[g] != limit)
        panic("set_sender_limit: group " + std::to_string(g) + " has another limit");
    limits_[g] = limit;
}

void Senders::attach(Peer& p) {
    SenderGroup g = p.job->message->sender_group;
    if (g >= limits_.size() || !limits_[g].any()) return;
    Transport& t = *p.job->transport;
    if (t.name == c_.cfg.retry_transport) return;
    Queue& q = *p.queue;
    SenderBook& book = t.senders;
    std::string key = std::to_string(g) + " " + sender_scope_key(q, limits_[g].per);
    auto [it, made] = book.by_key.try_emplace(key, 0);
    if (made) {
        uint32_t number;
        if (book.free.empty()) {
            book.loads.emplace_back();
            number = static_cast<uint32_t>(book.loads.size());
        } else {
            number = book.free.back();
            book.free.pop_back();
        }
        auto l = std::make_unique<SenderLoad>();
        l->group = g;
        l->limit = limits_[g];
        l->key = key;
        if (l->limit.rate_count > 0)
            l->rate_room = gcra_room(0, c_.now, l->limit.interval(), l->limit.rate_burst);
        book.loads[number - 1] = std::move(l);
        it->second = number;
    }
    SenderLoad& l = book.at(it->second);
    if (l.queue && l.queue != &q) panic("sender load " + key + " spans two queues");
    if (!l.queue) {
        l.queue = &q;
        q.senders.push_back(l);
    }
    l.peers++;
    p.sender = it->second;
}

void Senders::detach(Peer& p) {
    SenderLoad& l = sender_load(p);
    p.sender = 0;
    if (--l.peers > 0) return;
    Transport& t = *l.queue->transport;
    l.queue->senders.erase(l.queue->senders.iterator_to(l));
    l.queue = nullptr;
    l.blocked = false;
    // The rate remembers recent starts until its TAT has passed.
    if (l.limit.rate_count > 0 && l.tat > static_cast<double>(c_.now) + slack)
        arm(t, l, static_cast<int64_t>(std::ceil(l.tat - slack)));
    else
        release(t, l);
}

void Senders::release(Transport& t, SenderLoad& l) {
    if (l.peers || l.todo || l.busy) panic("sender load " + l.key + " released while in use");
    SenderBook& book = t.senders;
    auto it = book.by_key.find(l.key);
    uint32_t number = it->second;
    book.by_key.erase(it);
    book.loads[number - 1].reset();
    book.free.push_back(number);
}

void Senders::started(SenderLoad& l) {
    if (l.room() <= 0) panic("sender load " + l.key + ": a start beyond its limit");
    l.todo--;
    l.queue->sender_todo--;
    l.busy++;
    if (l.limit.rate_count > 0) {
        l.tat = std::max(l.tat, static_cast<double>(c_.now)) + l.limit.interval();
        rate_update(*l.queue->transport, l);
    }
}

void Senders::ended(SenderLoad& l) {
    l.busy--;
    if (l.blocked && l.room() > 0) {
        l.blocked = false;
        c_.jobs.unblock_all(*l.queue->transport);
    }
}

bool Senders::job_stopped(const Job& j) const {
    bool stopped = false;
    for (const Peer& p : j.peers) {
        if (p.entries.empty()) continue;
        if (!p.sender || sender_load(p).room() > 0) return false;
        stopped = true;
    }
    if (stopped)
        for (const Peer& p : j.peers)
            if (!p.entries.empty()) sender_load(p).blocked = true;
    return stopped;
}

void Senders::rate_update(Transport& t, SenderLoad& l) {
    const SenderLimit& r = l.limit;
    l.rate_room = gcra_room(l.tat, c_.now, r.interval(), r.rate_burst);
    if (l.rate_room > 0) return;
    // The first second at which one more start fits in the burst allowance.
    double at = l.tat - r.interval() * static_cast<double>(r.rate_burst - 1);
    arm(t, l, static_cast<int64_t>(std::ceil(at - slack)));
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
    if (!l.peers) {
        if (l.tat > static_cast<double>(c_.now) + slack)
            arm(t, l, static_cast<int64_t>(std::ceil(l.tat - slack)));
        else
            release(t, l);
        return;
    }
    if (l.blocked && l.room() > 0) {
        l.blocked = false;
        c_.jobs.unblock_all(t);
    }
    c_.driver.wakeup();
}

void Senders::check(const Transport& t) const {
    auto fail = [&](const std::string& what) {
        panic("invariant: " + t.name + ": sender load " + what);
    };
    const SenderBook& book = t.senders;
    struct Count {
        int peers = 0, todo = 0, held = 0, busy = 0;
    };
    std::vector<Count> counts(book.loads.size());
    for (const Job& j : t.jobs)
        for (const Peer& p : j.peers) {
            SenderGroup g = j.message->sender_group;
            bool wanted =
                g && g < limits_.size() && limits_[g].any() && t.name != c_.cfg.retry_transport;
            if (wanted != (p.sender != 0))
                fail("of " + j.message->id + " on " + p.queue->name + ": peer " +
                     (p.sender ? "has one" : "has none"));
            if (!p.sender) continue;
            if (p.sender > book.loads.size() || !book.loads[p.sender - 1])
                fail("of " + j.message->id + ": peer points at a free load");
            const SenderLoad& l = book.at(p.sender);
            if (l.group != g || l.queue != p.queue ||
                l.key != std::to_string(g) + " " + sender_scope_key(*p.queue, l.limit.per))
                fail(l.key + ": peer of " + j.message->id + " on " + p.queue->name);
            Count& c = counts[p.sender - 1];
            c.peers++;
            c.todo += static_cast<int>(p.entries.size());
            c.held += p.held != nullptr;
            c.busy += p.refcount - static_cast<int>(p.entries.size());
        }
    size_t live = 0;
    for (size_t i = 0; i < book.loads.size(); ++i) {
        const SenderLoad* l = book.loads[i].get();
        if (!l) continue;
        ++live;
        const Count& c = counts[i];
        const std::string& k = l->key;
        auto it = book.by_key.find(k);
        if (it == book.by_key.end() || it->second != i + 1) fail(k + ": not found by its key");
        if (c.peers != l->peers || c.todo != l->todo || c.held != l->held || c.busy != l->busy)
            fail(k + ": counts " + std::to_string(l->peers) + " peers, " + std::to_string(l->todo) +
                 " waiting (" + std::to_string(l->held) + " held), " + std::to_string(l->busy) +
                 " busy; has " + std::to_string(c.peers) + ", " + std::to_string(c.todo) + " (" +
                 std::to_string(c.held) + "), " + std::to_string(c.busy));
        if ((l->peers > 0) != (l->queue != nullptr) || l->queue_hook.is_linked() != (l->peers > 0))
            fail(k + ": on a queue without peers, or peers without a queue");
        if (l->limit != limits_[l->group]) fail(k + ": not its group's limit");
        if (l->limit.concurrency > 0 && l->busy > l->limit.concurrency)
            fail(k + ": " + std::to_string(l->busy) + " in flight, limit " +
                 std::to_string(l->limit.concurrency));
        const bool timer =
            l->timer_due > 0 && c_.timers.has(l->timer_due, Timer::Kind::sender, t.name, k);
        if (l->timer_due > 0 && !timer) fail(k + ": its timer is missing");
        if (l->limit.rate_count > 0) {
            const SenderLimit& r = l->limit;
            if (l->rate_room < 0 || l->rate_room > r.rate_burst)
                fail(k + ": rate room " + std::to_string(l->rate_room));
            // What the rate allows only grows with time.
            if (l->rate_room > gcra_room(l->tat, c_.now, r.interval(), r.rate_burst))
                fail(k + ": rate room beyond what the rate allows");
            if (l->rate_room == 0 && !timer) fail(k + ": stopped by its rate without a timer");
            // No more than a burst of starts ahead of the steady rate.
            const double ahead = r.interval() * static_cast<double>(r.rate_burst);
            if (l->tat > static_cast<double>(c_.now) + ahead + 1e-6 * std::max(1.0, ahead))
                fail(k + ": rate ahead by more than its burst");
        }
        if (!l->peers && !timer) fail(k + ": kept without peers or a timer");
    }
    if (live != book.by_key.size()) fail("numbers and keys disagree");
    for (uint32_t n : book.free)
        if (n == 0 || n > book.loads.size() || book.loads[n - 1]) fail("free list holds a load");
    if (live + book.free.size() != book.loads.size()) fail("a number is neither used nor free");
    for (const auto& [qn, qp] : t.queue_by_name) {
        int todo = 0;
        for (const SenderLoad& l : qp->senders) {
            if (l.queue != qp.get()) fail(l.key + ": on another queue's list");
            todo += l.todo;
        }
        if (todo != qp->sender_todo)
            fail("waiting on " + qn + ": " + std::to_string(qp->sender_todo) + ", loads have " +
                 std::to_string(todo));
    }
}

} // namespace cqmgr::core
