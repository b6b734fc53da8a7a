// The preemption candidate index and the search that uses it.
//
// The reference search (Jobs::candidate_scan) walks the job list after the
// current job and keeps the job with the best score, delay / max_entries,
// among those that need between 1 and max_slots more entries; the first one
// wins ties.  It stops at the first level-zero job whose delay is no more
// than the best score so far.  Walking costs O(jobs) whenever no candidate
// is old enough to stop it early.
//
// The indexed search reaches the same answer in O(log jobs) per distinct
// maximum entry count, of which there are few: for one count the best job is
// the first one after the current job, because level-zero jobs are in
// enqueue order, oldest first.  While that order holds, the scan's early stop
// never skips a level-zero job that could win: after the stop, a level-zero
// job's delay, and so its score, is at most the best score.  Stacked jobs
// (few) are scored one by one.  When the best job is a stacked one that the
// scan might have stopped before, or when the enqueue order is broken
// (possible when an orphaned stack job anchors a re-linked job), the index
// declines and the scan answers.
#include "cqmgr/core/panic.hpp"
#include "cqmgr/core/structures.hpp"

namespace cqmgr::core {

namespace {

// 1 when two adjacent checked level-zero jobs are out of enqueue order.
int inverted(const Job* a, const Job* b) {
    return a && b && b->message->queued_time < a->message->queued_time ? 1 : 0;
}

// The neighbours of a job in the level-zero set.
template <class Set>
std::pair<const Job*, const Job*> neighbours(const Set& set, typename Set::const_iterator it) {
    const Job* prev = it == set.begin() ? nullptr : &*std::prev(it);
    const Job* next = std::next(it) == set.end() ? nullptr : &*std::next(it);
    return {prev, next};
}

// Links or unlinks a job on one of the index's lists.
template <class L> void keep_on(L& list, Job& j, Hook Job::*hook, bool want) {
    if ((j.*hook).is_linked() == want) return;
    if (want)
        list.push_back(j);
    else
        list.erase(list.iterator_to(j));
}

} // namespace

// Where job `j` belongs in the index, judged from its state alone.
CandidateIndex::Membership CandidateIndex::wanted(const Transport& t, const Job& j) {
    Membership m;
    bool linked = j.stack_level >= 0;
    m.blocker = linked && t.is_blocker(j);
    bool checked = linked && !m.blocker && j.children.empty();
    m.level0 = checked && j.stack_level == 0;
    if (m.level0 && j.max_entries() > j.selected_entries) m.size = j.max_entries();
    m.partial = m.size > 0 && j.selected_entries > 0;
    m.stacked = linked && j.stack_level > 0;
    return m;
}

void CandidateIndex::refresh(Job& j) {
    apply(j, wanted(*j.transport, j));
}

void CandidateIndex::forget(Job& j) {
    apply(j, Membership{});
}

void CandidateIndex::apply(Job& j, const Membership& want) {
    CandidateIndex& ix = *this;
    if (j.level0_hook.is_linked() != want.level0) {
        // Keep the count of out-of-order neighbours as the set changes.
        if (want.level0) {
            auto it = ix.level0.insert(j).first;
            if (&*it != &j)
                panic("index: two jobs share position label " + std::to_string(j.order));
            auto [prev, next] = neighbours(ix.level0, it);
            ix.inversions += inverted(prev, &j) + inverted(&j, next) - inverted(prev, next);
        } else {
            auto it = ix.level0.iterator_to(j);
            auto [prev, next] = neighbours(ix.level0, it);
            ix.inversions -= inverted(prev, &j) + inverted(&j, next) - inverted(prev, next);
            ix.level0.erase(it);
        }
    }
    if (j.indexed_size != want.size) {
        if (j.size_hook.is_linked()) ix.by_size.erase(ix.by_size.iterator_to(j));
        j.indexed_size = want.size;
        if (want.size > 0) ix.by_size.insert(j);
    }
    keep_on(ix.partial, j, &Job::partial_hook, want.partial);
    keep_on(ix.stacked, j, &Job::stacked_hook, want.stacked);
    keep_on(ix.blockers, j, &Job::blocker_hook, want.blocker);
}

void CandidateIndex::unblock_all() {
    while (!blockers.empty()) {
        Job& j = blockers.front();
        refresh(j);
        if (j.blocker_hook.is_linked()) panic("index: job of " + j.message->id + " still blocks");
    }
}

std::optional<Job*> CandidateIndex::best(const Job& current, int max_slots, int64_t now) {
    const Transport& t = *current.transport;
    CandidateIndex& ix = *this;
    if (ix.inversions > 0) return std::nullopt;
    const uint64_t after = current.order;
    Job* best = nullptr;
    double best_score = 0.0;
    // The scan's comparison, with its tie-break (first on the list) made
    // explicit since jobs are not met in list order here.
    auto consider = [&](Job& j) {
        double score = static_cast<double>(now - j.message->queued_time + 1) / j.max_entries();
        if (score > best_score || (best && score == best_score && j.order < best->order)) {
            best = &j;
            best_score = score;
        }
    };
    auto fits = [&](const Job& j) {
        int needed = j.max_entries() - j.selected_entries;
        return needed > 0 && needed <= max_slots;
    };

    // Stacked jobs after the current one, one by one.
    for (Job& j : ix.stacked)
        if (j.order > after && j.children.empty() && !t.is_blocker(j) && fits(j)) consider(j);

    auto first = ix.level0.upper_bound(after, CandidateIndex::ByOrder());
    if (first != ix.level0.end()) {
        // No level-zero job after the current one is older than `first`, so
        // once oldest / size falls below the best score, no larger size can
        // win or tie.
        double oldest = static_cast<double>(now - first->message->queued_time + 1);
        using Key = CandidateIndex::BySize::Key;
        const CandidateIndex::BySize by_size;
        for (int size = 1;;) {
            auto it = ix.by_size.lower_bound(Key{size, 0}, by_size);
            if (it == ix.by_size.end() || it->indexed_size > max_slots) break;
            size = it->indexed_size;
            if (oldest / size < best_score) break;
            auto c = ix.by_size.upper_bound(Key{size, after}, by_size);
            if (c != ix.by_size.end() && c->indexed_size == size) consider(*c);
            ++size;
        }
        // A partly selected job may fit although its maximum is larger.
        if (!(oldest / (max_slots + 1) < best_score))
            for (Job& j : ix.partial)
                if (j.order > after && j.indexed_size > max_slots && fits(j)) consider(j);
    }

    // The scan finds the best job unless it stops before reaching it.  It
    // cannot stop before a level-zero best job (a level-zero job after the
    // stop scores no more than the best so far, and the first one wins ties),
    // but it may stop before a stacked one: it does if the level-zero job
    // just before it is no older than the best score up to there, which is
    // at most best_score.  The stop is monotonic along the list, so that
    // one job is the only one to test.
    if (best && best->stack_level > 0) {
        auto z = ix.level0.lower_bound(best->order, CandidateIndex::ByOrder());
        if (z != ix.level0.begin()) {
            const Job& prev = *std::prev(z);
            if (prev.order > after && now - prev.message->queued_time + 1 <= best_score)
                return std::nullopt;
        }
    }
    return best;
}

} // namespace cqmgr::core
