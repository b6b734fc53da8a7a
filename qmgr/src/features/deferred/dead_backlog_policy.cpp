#include "dead_backlog_policy.hpp"

#include "end_plan.hpp"

namespace cqmgr::qmgr {

BacklogChoice backlog_choice(const BacklogCase& c, int64_t now, const conf::QmgrParams& p) {
    if (!c.times || c.explicit_request) return BacklogChoice::take;
    // No known destination, or one that is not dead: the attempt may go.
    if (c.destinations == 0 || c.dead < c.destinations) return BacklogChoice::take;
    Undelivered fate = undelivered_fate(c.times->null_sender, c.times->arrival, c.times->warn_time,
                                        false, now + attempt_allowance, p);
    return fate == Undelivered::keep ? BacklogChoice::postpone : BacklogChoice::take;
}

} // namespace cqmgr::qmgr
