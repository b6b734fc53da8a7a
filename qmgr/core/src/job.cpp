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
#include "cqmgr/core/scheduler.hpp"

#include <algorithm>

namespace cqmgr::core {

Job& Scheduler::job_obtain(Message& m, Transport& t) {
    Job* found = find_job(m, t);
    if (!found) {
        found = new Job;
        found->message = &m;
        found->transport = &t;
        t.jobs.push_back(*found);
        m.jobs.push_back(found);
    }
    Job& j = *found;
    if (j.stack_level < 0) job_link(j);
    // New entries change both the candidate choice and the blocker status.
    t.reset_candidate_cache();
    job_unblock(j);
    return j;
}

// Clears job `j`'s blocker mark, if it has one.
void Scheduler::job_unblock(Job& j) {
    Transport& t = *j.transport;
    if (!t.is_blocker(j)) return;
    j.blocker_tag = 0;
    index_refresh(j);
    // Selection starts over from the front to find the real current job.
    t.job_current = t.job_list.empty() ? nullptr : &t.job_list.front();
}

void Scheduler::job_link(Job& j) {
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
        if (old) job_move_limits(*old);
    }
    // Take every unused slot of the pool; the surplus goes back once the
    // message is fully read.
    if (t.rcpt_unused > 0) {
        j.rcpt_limit += t.rcpt_unused;
        m.rcpt_limit += t.rcpt_unused;
        t.rcpt_unused = 0;
    }
}

void Scheduler::job_move_limits(Job& j) {
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

void Scheduler::job_parent_gone(Job& j, Job* parent) {
    while (!j.children.empty()) {
        Job& child = j.children.front();
        j.children.pop_front();
        if (parent) parent->children.push_back(child);
        child.stack_parent = parent;
    }
}

void Scheduler::job_unlink(Job& j) {
    Transport& t = *j.transport;
    if (j.stack_level != 0) panic("job_unlink: stack level " + std::to_string(j.stack_level));
    if (j.stack_parent) panic("job_unlink: job of " + j.message->id + " has a parent");
    if (j.sibling_hook.is_linked()) panic("job_unlink: job of " + j.message->id + " has siblings");
    job_parent_gone(j, nullptr);
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

void Scheduler::job_retire(Job& j) {
    // Off the job lists until it gets entries again; keeps its slot counters.
    if (j.stack_level > 0) job_pop(j);
    job_move_limits(j);
    job_unlink(j);
}

void Scheduler::job_free(Job& j) {
    Transport& t = *j.transport;
    if (j.rcpt_count) panic("job_free: job of " + j.message->id + " still has recipients");
    if (j.stack_level > 0) job_pop(j);
    job_move_limits(j);
    if (j.rcpt_limit) panic("job_free: recipient slots leak in job of " + j.message->id);
    if (j.stack_level >= 0) job_unlink(j);
    if (t.job_next_unread == &j) panic("job_free: freed job is the next unread job");
    if (!j.peers.empty()) panic("job_free: job of " + j.message->id + " still has peers");
    t.jobs.erase_and_dispose(t.jobs.iterator_to(j), [](Job* dead) { delete dead; });
}

void Scheduler::job_count_slots(Job& j) {
    j.slots_available++;
    j.slots_used++;
    // A job other than the one the cache was computed for got a bit more
    // likely to be a candidate.
    if (&j != j.transport->candidate_cache_current) j.transport->reset_candidate_cache();
}

// The job that should preempt `current`, if any (cached per current job and time).
Job* Scheduler::job_candidate(Job& current) {
    Transport& t = *current.transport;
    // Negative results are cached too; the time matters only for ranking.
    if (t.candidate_cache_current == &current &&
        (t.candidate_cache_time == now_ || t.candidate_cache == nullptr))
        return t.candidate_cache;

    // The fewest slots `current` can ever accumulate bounds the candidates.
    int max_slots = (current.min_entries() - current.selected_entries + current.slots_available) /
                    t.cfg.slot_cost;
    Job* best = nullptr;
    if (max_slots > 0) {
        // The index answers in logarithmic time when it can be sure to
        // choose exactly what the scan would; otherwise the scan does.
        std::optional<Job*> indexed = job_candidate_indexed(current, max_slots);
        if (indexed) {
            t.candidates.indexed_searches++;
            best = *indexed;
            if (cfg_.verify_candidates && best != job_candidate_scan(current, max_slots))
                panic("job_candidate: index and scan disagree after job of " + current.message->id);
        } else {
            t.candidates.scanned_searches++;
            best = job_candidate_scan(current, max_slots);
        }
    }
    t.candidate_cache = best;
    t.candidate_cache_current = &current;
    t.candidate_cache_time = now_;
    return best;
}

// The reference candidate search: stock's walk of the job list after `current`.
Job* Scheduler::job_candidate_scan(Job& current, int max_slots) {
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
        int64_t delay = now_ - j.message->queued_time + 1;
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

Job* Scheduler::job_preempt(Job& current) {
    Transport& t = *current.transport;
    // Too small to ever earn the minimum slots, or nothing earned yet (the
    // counter goes negative after loans).
    if (current.slots_available <= 0 || current.max_entries() < t.cfg.min_slots * t.cfg.slot_cost)
        return &current;
    Job* j = job_candidate(current);
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

    trace([&] {
        return "qmgr_job_preempt: " + current.message->id + " by " + j->message->id + ", level " +
               std::to_string(current.stack_level + 1) + " (" +
               std::to_string(current.slots_available) + " slots available, " +
               std::to_string(expected) + " entries expected)";
    });
    job_push(*j, current);
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
void Scheduler::job_push(Job& j, Job& parent) {
    Transport& t = *j.transport;
    if (j.stack_level > 0) job_pop(j);
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

void Scheduler::job_pop(Job& j) {
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
    job_parent_gone(j, parent);
    j.stack_level = 0;
    index_refresh(j);
    if (parent) index_refresh(*parent);
    t.reset_candidate_cache();
}

// Asks the driver for more recipients of job `j`'s message when it is
// time: early, when enough slots are free or enough time has passed (so
// that slow destinations don't starve the message), or, with `any_room`,
// whenever there is room at all.
void Scheduler::job_refill(Job& j, bool any_room) {
    Message& m = *j.message;
    Transport& t = *j.transport;
    if (!m.has_unread || m.refcount <= 0 || m.refill_pending) return;
    int room = m.rcpt_limit - m.rcpt_count;
    bool due = any_room ? room > 0
                        : room >= t.cfg.refill_limit ||
                              (room > 0 && now_ - m.refill_time >= t.cfg.refill_delay);
    if (!due) return;
    trace([&] {
        return "qmgr_job_refill: " + m.id + " " + t.name + ": " + std::to_string(reread_limit(m)) +
               " recipients (" + std::to_string(m.rcpt_count) + " of " +
               std::to_string(m.rcpt_limit) + " in core)";
    });
    m.refill_pending = true;
    message_hold_update(m);
    driver_.refill(m, reread_limit(m));
}

// The peer of job `j` whose entry goes next, reading more recipients first
// when it is time.  `held` is set to the first peer with room that was
// passed over because its entry is held back for the refill
// (peer_hold_update).
Peer* Scheduler::job_peer_select(Job& j, Peer*& held) {
    job_refill(j, false);
    if (j.has_entries())
        if (Peer* p = peer_select(j, held)) return p;
    job_refill(j, true);
    // A driver that reads at once has assigned the batch already.
    if (j.has_entries())
        if (Peer* p = peer_select(j, held)) return p;
    return nullptr;
}

Entry* Scheduler::select_entry(Transport& t) {
    // A transport suspended since its connection was granted gets nothing.
    Entry* e = nullptr;
    if (!t.hold)
        e = t.urgent_jobs.empty() && !lane_capped(t) ? select_entry_locked(t)
                                                     : select_entry_lanes(t);
    // Nothing to send: release the rate lock so the transport is not stalled.
    if (!e) t.rate_locked = false;
    return e;
}

// Walks the job list from the current job (after trying to preempt it):
// blockers are skipped, a job whose queues are all at their window is
// marked a blocker, a job with nothing in core is retired, and the first
// job with a selectable peer gives its peer's oldest entry.
//
// A job whose only usable entries are held back for its refill is neither:
// its queues have room.  Stock would have read the refill and sent the
// entry, so that job stays the current one (selection resumes there, and
// no job before the current one is ever anything but a blocker); the walk
// goes on past it.  select_transport() does not count held entries, so an
// agent finds only held ones when this very walk asked for their refill
// (or when one arrived during a transport rate delay): then the first of
// them goes as it is, rather than leaving the agent without a request.
//
// With `skip_urgent` (lanes.cpp: mail other than urgent is owed its share)
// urgent jobs are passed over and no job is preempted.
Entry* Scheduler::select_entry_locked(Transport& t, bool skip_urgent) {
    Job* job = t.job_current;
    if (!job) return nullptr;
    if (t.cfg.policy == SchedulerPolicy::finch) {
        // Jobs within their share first; the walk below, without
        // preemption, gives the agent to the oldest job otherwise.
        if (Entry* e = finch_select(t, skip_urgent)) return e;
        job = t.job_current;
        if (!job) return nullptr;
    } else if (t.cfg.slot_cost >= 2 && !skip_urgent) {
        job = job_preempt(*job);
    }
    Job* first_held = nullptr;
    Peer* held_peer = nullptr;
    while (job) {
        auto next_it = std::next(t.job_list.iterator_to(*job));
        Job* next = next_it == t.job_list.end() ? nullptr : &*next_it;
        if (t.is_blocker(*job) || (skip_urgent && job->message->lane == Lane::urgent)) {
            job = next;
            continue;
        }
        Peer* held = nullptr;
        if (Peer* p = job_peer_select(*job, held)) return entry_take(*p, first_held);
        if (held) {
            if (!first_held) first_held = job, held_peer = held;
        } else if (job->has_entries()) {
            job_block(*job);
        } else {
            // Nothing in core for now ("stalled"): off the lists until refilled.
            trace([&] { return "qmgr_job_retire: " + job->message->id; });
            job_retire(*job);
        }
        job = next;
    }
    t.job_current = first_held;
    // Urgent mail may still go (the caller asks next): a held entry can wait.
    if (skip_urgent || !held_peer || held_peer->entries.empty()) return nullptr;
    if (held_peer->held) t.early_entries++;
    return entry_take(*held_peer, first_held);
}

// Marks job `j`, whose entries are all held back by destination windows, a
// blocker, and its busy queues with it.
void Scheduler::job_block(Job& j) {
    Transport& t = *j.transport;
    trace([&] {
        return "qmgr_job_entry_select: " + j.message->id + " " + t.name +
               ": blocked by destination windows";
    });
    j.blocker_tag = t.blocker_tag;
    index_refresh(j);
    for (Peer& p : j.peers)
        if (!p.entries.empty()) p.queue->blocker_tag = t.blocker_tag;
}

// Selects peer `p`'s oldest entry for delivery; selection resumes at
// `resume`, or at `p`'s job.
Entry* Scheduler::entry_take(Peer& p, Job* resume) {
    Job& job = *p.job;
    Transport& t = *job.transport;
    Entry* e = &p.entries.front();
    trace([&] {
        return "qmgr_peer_select: " + job.message->id + " " + t.name + " " + p.queue->name + " (" +
               std::to_string(e->rcpts.size()) + " recipients, window " +
               std::to_string(p.queue->window) + ", busy " + std::to_string(p.queue->busy_count()) +
               ")";
    });
    entry_select(e);
    job_count_slots(job);
    t.job_current = resume ? resume : &job;
    if (!job.has_entries() && !job.message->has_unread) job_retire(job);
    return e;
}

void Scheduler::job_blocker_update(Queue& q) {
    Transport& t = *q.transport;
    if (q.blocker_tag != t.blocker_tag) return;
    // A queue the administrator suspended or capped frees nobody until it
    // may take more.
    int room = q.select_window() - q.busy_count();
    if (q.may_start() && room > 0 && !q.todo.empty()) {
        // Unmark every blocker of the transport at once; selection finds the
        // real current job again.
        t.blocker_tag += 2;
        index_unblock_all(t);
        t.job_current = t.job_list.empty() ? nullptr : &t.job_list.front();
        t.candidate_cache_current = nullptr;
    }
    // A queue pausing for a rate delay keeps its mark: its resumption
    // frees the jobs it blocks.
    if ((q.may_start() && room > 0) || q.dead()) q.blocker_tag = 0;
}

} // namespace cqmgr::core
