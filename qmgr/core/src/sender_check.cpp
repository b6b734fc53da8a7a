// The invariants of sender groups' loads and parts (sender.cpp), for
// check_invariants(): each part's counts against its peers' entries, each
// load's against its parts, the books' numbers, keys and timers, and the
// limits held (a concurrency beyond its limit only where a change of
// provider brought it).
#include "core.hpp"

#include <algorithm>

namespace cqmgr::core {

void Senders::check(const Transport& t) const {
    auto fail = [&](const std::string& what) {
        panic("invariant: " + t.name + ": sender load " + what);
    };
    const SenderBook& book = t.senders;
    struct Count {
        int peers = 0, todo = 0, held = 0, busy = 0;
    };
    std::vector<Count> counts(book.parts.size());
    for (const Job& j : t.jobs)
        for (const Peer& p : j.peers) {
            SenderGroup g = j.message->sender_group;
            bool wanted = limited(g) && t.name != c_.cfg.retry_transport;
            if (wanted != (p.sender != 0))
                fail("of " + j.message->id + " on " + p.queue->name + ": peer " +
                     (p.sender ? "has one" : "has none"));
            if (!p.sender) continue;
            if (p.sender > book.parts.size() || !book.parts[p.sender - 1])
                fail("of " + j.message->id + ": peer points at a free part");
            const SenderPart& part = book.part(p.sender);
            if (!part.load || part.load > book.loads.size() || !book.loads[part.load - 1])
                fail("of " + j.message->id + ": part points at a free load");
            const SenderLoad& l = book.at(part.load);
            if (l.group != g || part.queue != p.queue ||
                l.key != sender_scope_key(g, *p.queue, l.limit.per))
                fail(l.key + ": peer of " + j.message->id + " on " + p.queue->name);
            Count& c = counts[p.sender - 1];
            c.peers++;
            c.todo += static_cast<int>(p.entries.size());
            c.held += p.held != nullptr;
            c.busy += p.refcount - static_cast<int>(p.entries.size());
        }
    // Each part against its peers, and each load against its parts.
    std::vector<Count> load_counts(book.loads.size());
    size_t live_parts = 0;
    for (size_t i = 0; i < book.parts.size(); ++i) {
        const SenderPart* part = book.parts[i].get();
        if (!part) continue;
        ++live_parts;
        const Count& c = counts[i];
        std::string k = "part " + std::to_string(i + 1);
        if (part->number != i + 1) fail(k + ": numbered " + std::to_string(part->number));
        if (c.peers != part->peers || c.todo != part->todo || c.held != part->held ||
            c.busy != part->busy)
            fail(k + ": counts " + std::to_string(part->peers) + " peers, " +
                 std::to_string(part->todo) + " waiting (" + std::to_string(part->held) +
                 " held), " + std::to_string(part->busy) + " busy; has " + std::to_string(c.peers) +
                 ", " + std::to_string(c.todo) + " (" + std::to_string(c.held) + "), " +
                 std::to_string(c.busy));
        if (part->peers <= 0 || !part->queue_hook.is_linked())
            fail(k + ": kept without peers, or off its queue");
        Count& lc = load_counts[part->load - 1];
        lc.peers++;
        lc.busy += part->busy;
    }
    for (uint32_t n : book.free_parts)
        if (n == 0 || n > book.parts.size() || book.parts[n - 1]) fail("free list holds a part");
    if (live_parts + book.free_parts.size() != book.parts.size())
        fail("a part number is neither used nor free");
    size_t live = 0;
    for (size_t i = 0; i < book.loads.size(); ++i) {
        const SenderLoad* l = book.loads[i].get();
        if (!l) continue;
        ++live;
        const Count& c = load_counts[i];
        const std::string& k = l->key;
        auto it = book.by_key.find(k);
        if (it == book.by_key.end() || it->second != i + 1) fail(k + ": not found by its key");
        if (c.peers != l->parts || c.busy != l->busy)
            fail(k + ": counts " + std::to_string(l->parts) + " parts, " + std::to_string(l->busy) +
                 " busy; has " + std::to_string(c.peers) + ", " + std::to_string(c.busy));
        if (l->limit != limits_[l->group]) fail(k + ": not its group's limit");
        if (l->limit.concurrency > 0 && l->busy > l->limit.concurrency && !l->over)
            fail(k + ": " + std::to_string(l->busy) + " in flight, limit " +
                 std::to_string(l->limit.concurrency));
        if (l->over && l->busy <= l->limit.concurrency) fail(k + ": over, within its limit");
        const bool timer =
            l->timer_due > 0 && c_.timers.has(l->timer_due, Timer::Kind::sender, t.name, k);
        if (l->timer_due > 0 && !timer) fail(k + ": its timer is missing");
        if (l->limit.rate_count > 0) {
            const SenderLimit& r = l->limit;
            // At most a second's worth at the rate, and the burst.
            if (l->rate_room < 0 ||
                l->rate_room > gcra_room(0, c_.now, r.interval(), r.rate_burst))
                fail(k + ": rate room " + std::to_string(l->rate_room));
            // What the rate allows only grows with time.
            if (l->rate_room > gcra_room(l->tat, c_.now, r.interval(), r.rate_burst))
                fail(k + ": rate room beyond what the rate allows");
            if (l->rate_room == 0 && !timer) fail(k + ": stopped by its rate without a timer");
            // No more than the current second's starts and a burst ahead
            // of the steady rate.
            const double ahead = 1 + r.interval() * static_cast<double>(r.rate_burst);
            if (l->tat > static_cast<double>(c_.now) + ahead + 1e-6 * std::max(1.0, ahead))
                fail(k + ": rate ahead by more than its burst");
        }
        if (!l->parts && !timer) fail(k + ": kept without parts or a timer");
    }
    if (live != book.by_key.size()) fail("numbers and keys disagree");
    for (uint32_t n : book.free)
        if (n == 0 || n > book.loads.size() || book.loads[n - 1]) fail("free list holds a load");
    if (live + book.free.size() != book.loads.size()) fail("a number is neither used nor free");
    for (const auto& [qn, qp] : t.queue_by_name) {
        int todo = 0;
        for (const SenderPart& part : qp->senders) {
            if (part.queue != qp.get()) fail("part on " + qn + ": on another queue's list");
            if (!book.by_key.count(
                    sender_scope_key(book.at(part.load).group, *qp, book.at(part.load).limit.per)))
                fail("part on " + qn + ": its scope's load is missing");
            todo += part.todo;
        }
        if (todo != qp->sender_todo)
            fail("waiting on " + qn + ": " + std::to_string(qp->sender_todo) + ", parts have " +
                 std::to_string(todo));
    }
}

} // namespace cqmgr::core
