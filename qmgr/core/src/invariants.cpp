// A full consistency check of the scheduler's structures, for tests.
#include "core.hpp"

#include <unordered_map>

namespace cqmgr::core {

namespace {
// The entry of `p` that should be held back for a refill, from scratch.
const Entry* held_entry(const Peer& p) {
    const Message& m = *p.job->message;
    if (!m.refill_pending || p.entries.size() != 1) return nullptr;
    int limit = m.single_rcpt ? 1 : p.job->transport->cfg.dest_recipient_limit;
    const Entry& e = p.entries.front();
    return limit == 0 || static_cast<int>(e.rcpts.size()) < limit ? &e : nullptr;
}
} // namespace

void check_lanes(const Transport& t) {
    auto fail = [&](const std::string& what) { panic("invariant: " + t.name + ": " + what); };
    int busy[lane_count] = {0, 0, 0};
    for (const auto& [qn, qp] : t.queue_by_name) {
        int urgent = 0;
        for (const Entry& e : qp->todo)
            urgent += e.message->lane == Lane::urgent;
        for (const Entry& e : qp->busy)
            busy[static_cast<int>(e.message->lane)]++;
        if (urgent != qp->urgent_todo)
            fail(qn + ": " + std::to_string(urgent) + " urgent entries waiting, counts " +
                 std::to_string(qp->urgent_todo));
    }
    for (int l = 0; l < lane_count; ++l)
        if (busy[l] != t.lane_busy[l])
            fail(std::string(lane_name(static_cast<Lane>(l))) + " busy " + std::to_string(busy[l]) +
                 ", counts " + std::to_string(t.lane_busy[l]));
    size_t urgent_linked = 0;
    for (const Job& j : t.job_list)
        urgent_linked += j.message->lane == Lane::urgent;
    if (urgent_linked != t.urgent_jobs.size()) fail("urgent list misses linked urgent jobs");
    const Job* prev = nullptr;
    for (const Job& j : t.urgent_jobs) {
        if (j.message->lane != Lane::urgent || j.stack_level < 0)
            fail("urgent list holds " + j.message->id);
        if (prev && j.message->queued_time < prev->message->queued_time)
            fail("urgent list out of enqueue order at " + j.message->id);
        prev = &j;
    }
}

void Scheduler::check_invariants() const {
    auto fail = [](const std::string& what) { panic("invariant: " + what); };
    const Core& c = *c_;
    int total_rcpts = 0;
    int total_queues = 0;
    std::unordered_map<const Message*, int> msg_rcpts, msg_entries;
    for (const auto& [name, tp] : c.transports.all()) {
        const Transport& t = *tp;
        if (t.job_list.size() != t.job_bytime.size()) fail(name + ": job lists differ in size");
        if (t.pending < 0) fail(name + ": negative pending count");
        for (const Job& j : t.job_list)
            if (j.stack_level < 0) fail(name + ": linked job with negative stack level");
        t.candidates.check(t);
        check_lanes(t);
        c.senders.check(t);
        for (const Job& j : t.jobs) {
            if (j.selected_entries > j.read_entries) fail(name + ": job selected more than read");
            if (j.rcpt_count < 0) fail(name + ": negative job recipient count");
            bool linked = j.transport_hook.is_linked();
            if (linked != (j.stack_level >= 0)) fail(name + ": job link state and level disagree");
            int peer_entries = 0, peer_busy = 0;
            for (const Peer& p : j.peers) {
                peer_busy += p.refcount - static_cast<int>(p.entries.size());
                if (p.job != &j) fail(name + ": peer points to another job");
                if (static_cast<int>(p.entries.size()) > p.refcount)
                    fail(name + ": peer refcount too low");
                if (p.held != held_entry(p))
                    fail(name + ": peer of " + j.message->id + ": held entry is stale");
                peer_entries += static_cast<int>(p.entries.size());
            }
            if (peer_entries != j.read_entries - j.selected_entries)
                fail(name + ": job todo entries " + std::to_string(peer_entries) + " != read " +
                     std::to_string(j.read_entries) + " - selected " +
                     std::to_string(j.selected_entries));
            if (j.in_flight != peer_busy)
                fail(name + ": job of " + j.message->id + ": " + std::to_string(j.in_flight) +
                     " in flight, its peers have " + std::to_string(peer_busy));
        }
        for (const auto& [qn, qp] : t.queue_by_name) {
            const Queue& q = *qp;
            ++total_queues;
            if (q.window < 0) fail(name + "/" + qn + ": negative window");
            if (q.dead() != q.dsn.has_value()) fail(name + "/" + qn + ": dead without reason");
            int held = 0;
            for (const Entry& e : q.todo)
                held += e.peer->held == &e;
            if (held != q.held)
                fail(name + "/" + qn + ": holds " + std::to_string(held) + " entries, counts " +
                     std::to_string(q.held));
            for (const List<Entry, &Entry::queue_hook>* l : {&q.todo, &q.busy})
                for (const Entry& e : *l) {
                    if (e.queue != &q) fail(name + "/" + qn + ": entry on the wrong queue");
                    if (e.rcpts.empty()) fail(name + "/" + qn + ": empty entry");
                    total_rcpts += static_cast<int>(e.rcpts.size());
                    msg_rcpts[e.message] += static_cast<int>(e.rcpts.size());
                    msg_entries[e.message] += 1;
                }
        }
    }
    if (total_rcpts != c.recipient_count)
        fail("recipient count " + std::to_string(c.recipient_count) + " != in-core " +
             std::to_string(total_rcpts));
    if (total_queues != c.queue_count) fail("queue count mismatch");
    c.limits.check();
    c.senders.check_rules();
    for (const auto& [m, n] : msg_rcpts)
        if (m->rcpt_count != n) fail("message " + m->id + ": recipient count mismatch");
    for (const auto& [m, n] : msg_entries)
        if (m->refcount != n)
            fail("message " + m->id + ": refcount " + std::to_string(m->refcount) + " != entries " +
                 std::to_string(n));
}

void CandidateIndex::check(const Transport& t) const {
    auto fail = [&](const std::string& what) {
        panic("invariant: " + t.name + ": index: " + what);
    };
    const CandidateIndex& ix = *this;
    // Every job, linked or not, is where its state says, and nowhere else.
    size_t level0 = 0, sized = 0, partial = 0, stacked = 0, blockers = 0;
    for (const Job& j : t.jobs) {
        CandidateIndex::Membership want = CandidateIndex::wanted(t, j);
        const std::string who = "job of " + j.message->id;
        if (j.level0_hook.is_linked() != want.level0) fail(who + ": level-zero membership");
        if (j.indexed_size != want.size || j.size_hook.is_linked() != (want.size > 0))
            fail(who + ": size " + std::to_string(j.indexed_size) + ", want " +
                 std::to_string(want.size));
        if (j.partial_hook.is_linked() != want.partial) fail(who + ": partial membership");
        if (j.stacked_hook.is_linked() != want.stacked) fail(who + ": stacked membership");
        if (j.blocker_hook.is_linked() != want.blocker) fail(who + ": blocker membership");
        level0 += want.level0;
        sized += want.size > 0;
        partial += want.partial;
        stacked += want.stacked;
        blockers += want.blocker;
    }
    if (ix.level0.size() != level0 || ix.by_size.size() != sized || ix.partial.size() != partial ||
        ix.stacked.size() != stacked || ix.blockers.size() != blockers)
        fail("holds jobs that are not the transport's");
    // Position labels increase along the list.
    const Job* prev = nullptr;
    for (const Job& j : t.job_list) {
        if (prev && prev->order >= j.order) fail("position labels out of order");
        prev = &j;
    }
    int inversions = 0;
    prev = nullptr;
    for (const Job& j : ix.level0) {
        if (prev && j.message->queued_time < prev->message->queued_time) ++inversions;
        prev = &j;
    }
    if (inversions != ix.inversions)
        fail("counts " + std::to_string(ix.inversions) + " inversions, has " +
             std::to_string(inversions));
}

} // namespace cqmgr::core
