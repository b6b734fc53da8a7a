// Position labels for a transport's job list.  Job::order increases along
// the list, so the candidate index can tell with one comparison whether a
// job comes after another, and can keep jobs sorted by position.
//
// A new label bisects the gap between the job's neighbours; appending leaves
// a wide gap after the last job, since most jobs are appended.  When a gap is
// used up (a job was placed between two with adjacent labels), a window
// around it is relabelled evenly; the window doubles until its labels are
// sparse enough, so the work is proportional to how crowded the spot is.
// This is a simplified order-maintenance list (Dietz and Sleator); the
// labels of jobs in the index's sorted sets may change, but never their
// relative order, which is all the sets depend on.
#include "jobs.hpp"

#include <limits>

namespace cqmgr::core {

namespace {
constexpr uint64_t label_max = std::numeric_limits<uint64_t>::max();
constexpr uint64_t append_step = uint64_t{1} << 32;
// After relabelling, at least this much room between neighbours.
constexpr uint64_t min_gap = uint64_t{1} << 16;
} // namespace

// Gives job `j`, just placed on its transport's job list, a label between
// its neighbours'.
void job_order_assign(Job& j) {
    Transport& t = *j.transport;
    auto& list = t.job_list;
    auto it = list.iterator_to(j);
    // Labels 0 and label_max are never used: they stand for the list ends.
    uint64_t lo = it == list.begin() ? 0 : std::prev(it)->order;
    bool last = std::next(it) == list.end();
    uint64_t hi = last ? label_max : std::next(it)->order;
    if (hi - lo >= 2) {
        j.order = last && hi - lo > 2 * append_step ? lo + append_step : lo + (hi - lo) / 2;
        return;
    }

    // Grow a window [first, end) around the job until its span leaves
    // min_gap per job, or it covers the whole list.
    auto first = it, end = std::next(it);
    size_t count = 1;
    for (size_t reach = 1;; reach *= 2) {
        for (size_t i = 0; i < reach && first != list.begin(); ++i, ++count)
            --first;
        for (size_t i = 0; i < reach && end != list.end(); ++i, ++count)
            ++end;
        lo = first == list.begin() ? 0 : std::prev(first)->order;
        hi = end == list.end() ? label_max : end->order;
        bool whole = first == list.begin() && end == list.end();
        if ((hi - lo) / (count + 1) >= min_gap || whole) break;
    }
    uint64_t step = (hi - lo) / (count + 1);
    if (step == 0) panic("job_order_assign: no labels left for " + std::to_string(count) + " jobs");
    t.candidates.relabels++;
    uint64_t label = lo;
    for (auto p = first; p != end; ++p)
        p->order = label += step;
}

} // namespace cqmgr::core
