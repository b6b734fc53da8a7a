// Jobs: Rak's preemptive scheduling of one transport's messages, and the
// per-transport recipient pools.
//
// The scheduler's job list starts in enqueue order.  Each selected entry earns
// its job a fraction (1/slot_cost) of a "delivery slot".  When the current job
// has earned enough slots to cover, within the loan and discount, all the
// entries a smaller job still needs, that job is moved in front of it on the
// job list ("preempts" it) and the slots are spent.  Because a job spends at
// most one slot per slot_cost entries it delivered, its delivery is stretched
// by at most slot_cost/(slot_cost-1), however deeply preemptions nest.  The
// stack parent/child links exist only to give slots back correctly when a
// preempting job finishes with fewer slots than it was expected to use.
#include "core.hpp"

#include <algorithm>

namespace cqmgr::core {

namespace {

// Hands `j`'s stack children to `parent` (or none): `j` leaves its stack.
void parent_gone(Job& j, Job* parent) {
    while (!j.children.empty()) {
        Job& child = j.children.front();
        j.children.pop_front();
        if (parent) parent->children.push_back(child);
        child.stack_parent = parent;
    }
}

} // namespace

int message_reread_limit(const Message& m) {
    // Only the recipient slots the message holds and does not use: its
    // jobs' places in the job lists decide how many it may have in core.
    int limit = m.rcpt_limit - m.rcpt_count;
    if (limit <= 0) panic(m.id + ": no recipient slots available");
    return std::min(limit, max_batch);
}

Job& Jobs::obtain(Message& m, Transport& t) {
    Job* found = find_job(m, t);
    if (!found) {
        found = new Job;
        found->message = &m;
        found->transport = &t;
        t.jobs.push_back(*found);
        m.jobs.push_back(found);
    }
    Job& j = *found;
    if (j.stack_level < 0) link(j);
    // New entries change both the candidate choice and the blocker status.
    t.reset_candidate_cache();
    unblock(j);
    return j;
}

// Clears job `j`'s blocker mark, if it has one.
void Jobs::unblock(Job& j) {
    Transport& t = *j.transport;
    if (!t.is_blocker(j)) return;
    j.blocker_tag = 0;
    index_refresh(j);
    // Selection starts over from the front to find the real current job.
    t.job_current = t.job_list.empty() ? nullptr : &t.job_list.front();
}

void Jobs::link(Job& j) {
    Transport& t = *j.transport;
    Message& m = *j.message;
    if (j.stack_level >= 0) panic("job_link: job of " + m.id + " already linked");

    // Find the place by enqueue time, from the end (usually: append).  Jobs
    // on a preemption stack (with a parent) are skipped as anchors so that
    // the time order of level-zero jobs is kept.
    Job* current = t.job_current;
    auto pos = t.job_list.end();
    while (pos != t.job_list.begin()) {
        auto prev = std::prev(pos);
        if (prev->stack_parent == nullptr && m.queued_time - prev->message->queued_time >= 0) break;
        if (current == &*prev) current = nullptr;
        pos = prev;
    }
    Job* unread = t.job_next_unread;
    auto tpos = t.job_bytime.end();
    while (tpos != t.job_bytime.begin()) {
        auto prev = std::prev(tpos);
        if (m.queued_time - prev->message->queued_time >= 0) break;
        if (unread == &*prev) unread = nullptr;
        tpos = prev;
    }
    j.stack_level = 0;
    t.job_list.insert(pos, j);
    t.job_bytime.insert(tpos, j);
    job_order_assign(j);
    index_refresh(j);
    if (m.lane == Lane::urgent) lane_link(j);

    // A job placed before the current job becomes current.
    if (current == nullptr) t.job_current = &j;
    // A job placed before the first job with unread recipients takes over
    // that role, and the old one gives back its unused slots.
    if (unread == nullptr) {
        Job* old = t.job_next_unread;
        t.job_next_unread = &j;
        if (old) move_limits(*old);
    }
    // Take every unused slot of the pool; the surplus goes back once the
    // message is fully read.
    if (t.rcpt_unused > 0) {
        j.rcpt_limit += t.rcpt_unused;
        m.rcpt_limit += t.rcpt_unused;
        t.rcpt_unused = 0;
    }
}

void Jobs::move_limits(Job& j) {
    Transport& t = *j.transport;
    Message& m = *j.message;
    Job* next = t.job_next_unread;
    if (&j == next) {
        // Advance to the next job (by time) whose message still has unread
        // recipients.  Amortised O(1): the time list never reorders.
        next = nullptr;
        for (auto it = std::next(t.job_bytime.iterator_to(j)); it != t.job_bytime.end(); ++it)
            if (it->message->has_unread) {
                next = &*it;
                break;
            }
        t.job_next_unread = next;
    }
    int unused = std::min(j.rcpt_limit - j.rcpt_count, m.rcpt_limit - m.rcpt_count);
    if (unused > 0) {
        j.rcpt_limit -= unused;
        m.rcpt_limit -= unused;
        t.rcpt_unused += unused;
        if (next && t.rcpt_unused > 0) {
            next->rcpt_limit += t.rcpt_unused;
            next->message->rcpt_limit += t.rcpt_unused;
            t.rcpt_unused = 0;
        }
    }
}

void Jobs::unlink(Job& j) {
    Transport& t = *j.transport;
    if (j.stack_level != 0) panic("job_unlink: stack level " + std::to_string(j.stack_level));
    if (j.stack_parent) panic("job_unlink: job of " + j.message->id + " has a parent");
    if (j.sibling_hook.is_linked()) panic("job_unlink: job of " + j.message->id + " has siblings");
    parent_gone(j, nullptr);
    auto it = t.job_list.iterator_to(j);
    if (t.job_current == &j)
        t.job_current = std::next(it) == t.job_list.end() ? nullptr : &*std::next(it);
    if (&j == t.candidate_cache || &j == t.candidate_cache_current) t.reset_candidate_cache();
    t.job_list.erase(it);
    t.job_bytime.erase(t.job_bytime.iterator_to(j));
    lane_unlink(j);
    j.stack_level = -1;
    index_refresh(j);
}

void Jobs::retire(Job& j) {
    // Off the job lists until it gets entries again; keeps its slot counters.
    if (j.stack_level > 0) pop(j);
    move_limits(j);
    unlink(j);
}

void Jobs::free(Job& j) {
    Transport& t = *j.transport;
    if (j.rcpt_count) panic("job_free: job of " + j.message->id + " still has recipients");
    if (j.stack_level > 0) pop(j);
    move_limits(j);
    if (j.rcpt_limit) panic("job_free: recipient slots leak in job of " + j.message->id);
    if (j.stack_level >= 0) unlink(j);
    if (t.job_next_unread == &j) panic("job_free: freed job is the next unread job");
    if (!j.peers.empty()) panic("job_free: job of " + j.message->id + " still has peers");
    t.jobs.erase_and_dispose(t.jobs.iterator_to(j), [](Job* dead) { delete dead; });
}

// The job that should preempt `current`, if any (cached per current job and time).
Job* Jobs::candidate(Job& current) {
    Transport& t = *current.transport;
    // Negative results are cached too; the time matters only for ranking.
    if (t.candidate_cache_current == &current &&
        (t.candidate_cache_time == c_.now || t.candidate_cache == nullptr))
        return t.candidate_cache;

    // The fewest slots `current` can ever accumulate bounds the candidates.
    int max_slots = (current.min_entries() - current.selected_entries + current.slots_available) /
                    t.cfg.slot_cost;
    Job* best = nullptr;
    if (max_slots > 0) {
        // The index answers in logarithmic time when it can be sure to
        // choose exactly what the scan would; otherwise the scan does.
        std::optional<Job*> indexed = t.candidates.best(current, max_slots, c_.now);
        if (indexed) {
            t.candidates.indexed_searches++;
            best = *indexed;
            if (c_.cfg.verify_candidates && best != candidate_scan(current, max_slots))
                panic("job_candidate: index and scan disagree after job of " + current.message->id);
        } else {
            t.candidates.scanned_searches++;
            best = candidate_scan(current, max_slots);
        }
    }
    t.candidate_cache = best;
    t.candidate_cache_current = &current;
    t.candidate_cache_time = c_.now;
    return best;
}

// The reference candidate search: stock's walk of the job list after `current`.
Job* Jobs::candidate_scan(Job& current, int max_slots) {
    Transport& t = *current.transport;
    Job* best = nullptr;
    double best_score = 0.0;
    // Only jobs after `current` can qualify: none of them is a stack child
    // of it.  Parents (jobs with children) are excluded.
    for (auto it = std::next(t.job_list.iterator_to(current)); it != t.job_list.end(); ++it) {
        Job& j = *it;
        if (!j.children.empty() || t.is_blocker(j)) continue;
        int max_total = j.max_entries();
        int max_needed = max_total - j.selected_entries;
        int64_t delay = c_.now - j.message->queued_time + 1;
        if (max_needed > 0 && max_needed <= max_slots) {
            double score = static_cast<double>(delay) / max_total;
            if (score > best_score) {
                best_score = score;
                best = &j;
            }
        }
        // Level-zero jobs are in time order: no later one can beat this.
        if (delay <= best_score && j.stack_level == 0) break;
    }
    return best;
}

Job* Jobs::preempt(Job& current) {
    Transport& t = *current.transport;
    // Too small to ever earn the minimum slots, or nothing earned yet (the
    // counter goes negative after loans).
    if (current.slots_available <= 0 || current.max_entries() < t.cfg.min_slots * t.cfg.slot_cost)
        return &current;
    Job* j = candidate(current);
    // A candidate whose sender groups stop all its waiting entries would
    // take the current job's slots and send nothing: it is a blocker, and
    // the search goes on without it (sender.cpp).
    while (j && j->message->sender_group && c_.senders.job_stopped(*j)) {
        block(*j);
        t.reset_candidate_cache();
        j = candidate(current);
    }
    if (!j) return &current;
    if (j == &current) panic("job_preempt: job preempts itself");
    if (!j->children.empty()) panic("job_preempt: candidate is already a stack parent");
    if (j->stack_level < 0) panic("job_preempt: candidate is not on the job list");

    // Enough slots, counting the loan and the discount?  The loan only lets
    // preemption happen earlier; the full price is paid from later slots.
    int expected = j->max_entries() - j->selected_entries;
    if (current.slots_available / t.cfg.slot_cost + t.cfg.slot_loan <
        expected * t.slot_loan_factor / 100.0)
        return &current;

    c_.trace([&] {
        return "qmgr_job_preempt: " + current.message->id + " by " + j->message->id + ", level " +
               std::to_string(current.stack_level + 1) + " (" +
               std::to_string(current.slots_available) + " slots available, " +
               std::to_string(expected) + " entries expected)";
    });
    push(*j, current);
    t.job_current = j;
    t.reset_candidate_cache();

    // Spend the slots now (one job can be preempted by several at once);
    // slots_used of the preempting job counts the difference from the
    // expectation, settled when it is popped.
    current.slots_available -= expected * t.cfg.slot_cost;
    j->slots_used = -expected;

    // A preempting job with unread recipients gets part of the extra pool.
    if (j->message->has_unread) {
        int extra = (t.rcpt_per_stack + t.rcpt_unused + 1) / 2;
        j->rcpt_limit += extra;
        j->message->rcpt_limit += extra;
        t.rcpt_unused -= extra;
    }
    return j;
}

// Moves job `j` in front of `parent` on the job list, as its stack child.
void Jobs::push(Job& j, Job& parent) {
    Transport& t = *j.transport;
    if (j.stack_level > 0) pop(j);
    // Out of the index while its position label changes.
    index_forget(j);
    t.job_list.erase(t.job_list.iterator_to(j));
    t.job_list.insert(t.job_list.iterator_to(parent), j);
    job_order_assign(j);
    j.stack_parent = &parent;
    parent.children.push_back(j);
    j.stack_level = parent.stack_level + 1;
    index_refresh(j);
    index_refresh(parent);
}

void Jobs::pop(Job& j) {
    Transport& t = *j.transport;
    if (j.stack_level <= 0) panic("job_pop: job not on a stack");
    Job* parent = j.stack_parent;
    // Give the parent back what was not used; only the original parent,
    // one level up, and never its slots_used (that would shrink its bound).
    if (parent && j.stack_level == parent->stack_level + 1)
        parent->slots_available -= j.slots_used * t.cfg.slot_cost;
    if (parent) {
        parent->children.erase(parent->children.iterator_to(j));
        j.stack_parent = nullptr;
    }
    parent_gone(j, parent);
    j.stack_level = 0;
    index_refresh(j);
    if (parent) index_refresh(*parent);
    t.reset_candidate_cache();
}

// A refill may be due (refill() checked the message): early, when enough
// slots are free or enough time has passed (so that slow destinations
// don't starve the message), or, with `any_room`, whenever there is room
// at all.
void Jobs::refill_if_due(Job& j, bool any_room) {
    Message& m = *j.message;
    Transport& t = *j.transport;
    int room = m.rcpt_limit - m.rcpt_count;
    bool due = any_room ? room > 0
                        : room >= t.cfg.refill_limit ||
                              (room > 0 && c_.now - m.refill_time >= t.cfg.refill_delay);
    if (!due) return;
    c_.trace([&] {
        return "qmgr_job_refill: " + m.id + " " + t.name + ": " +
               std::to_string(message_reread_limit(m)) + " recipients (" +
               std::to_string(m.rcpt_count) + " of " + std::to_string(m.rcpt_limit) + " in core)";
    });
    m.refill_pending = true;
    message_hold_update(m);
    c_.driver.refill(m, message_reread_limit(m));
}

// Marks job `j`, whose entries are all held back by destination windows, a
// blocker, and its busy queues with it.
void Jobs::block(Job& j) {
    Transport& t = *j.transport;
    c_.trace([&] {
        return "qmgr_job_entry_select: " + j.message->id + " " + t.name +
               ": blocked by destination windows";
    });
    j.blocker_tag = t.blocker_tag;
    index_refresh(j);
    for (Peer& p : j.peers)
        if (!p.entries.empty()) {
            // A peer its sender group stops is freed by its group's load
            // (sender.cpp), not by its queue, which may have room for other
            // senders' mail all along.
            if (p.sender)
                if (SenderLoad& l = sender_load(p); l.room() <= 0) {
                    l.blocked = true;
                    continue;
                }
            p.queue->blocker_tag = t.blocker_tag;
            if (p.queue->share_bound()) t.share_blocked |= share_kind(*p.queue);
        }
}

void Jobs::unblock_all(Transport& t) {
    t.blocker_tag += 2;
    t.candidates.unblock_all();
    t.job_current = t.job_list.empty() ? nullptr : &t.job_list.front();
    t.candidate_cache_current = nullptr;
}

void Jobs::share_update(Transport& t, ShareDemand& d) {
    if (!t.share_blocked) return;
    if (!d.known) d.compute(t);
    // Whether each kind of share that marked blockers may have stopped
    // binding (share_binds; for a queue still earning its share, another
    // queue than itself must want an agent).
    uint8_t k = t.share_blocked;
    bool free = ((k & share_whole) && !d.waits) ||
                ((k & share_lowered) && !d.waits && d.whole_wants == 0) ||
                ((k & share_earning) && d.wants < 2);
    if (free) {
        t.share_blocked = 0;
        unblock_all(t);
    }
}

void Jobs::blocker_update(Queue& q) {
    Transport& t = *q.transport;
    ShareDemand d;
    share_update(t, d);
    if (q.blocker_tag != t.blocker_tag) return;
    // A queue the administrator suspended or capped frees nobody until it
    // may take more.
    int room = share_room(q, d);
    if (q.may_start() && room > 0 && !q.todo.empty()) unblock_all(t);
    // Still held back, now by its share alone: the jobs go when the others
    // no longer make it bind (share_update).
    else if (q.may_start() && !q.todo.empty() && q.share_bound())
        t.share_blocked |= share_kind(q);
    // A queue pausing for a rate delay keeps its mark: its resumption
    // frees the jobs it blocks.
    if ((q.may_start() && room > 0) || q.dead()) q.blocker_tag = 0;
}

} // namespace cqmgr::core
