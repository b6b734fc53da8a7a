// Destination shares (cqmgr_destination_agent_share): one destination may
// have at most a share of its transport's process limit in flight, so that
// a destination that holds its agents for long (a tarpit, a receiver that
// times out) cannot take all of them from the others.  The share only
// bounds new selections, like an administrator's cap (select_window());
// deliveries in flight above a lowered share finish as they are.
//
// The daemon lowers a destination's share below the transport's when the
// destination is slow or times out, and gives it back later (the
// daemon's isolation policy, through Scheduler::set_limit); the lowered
// share is kept by name (LimitBook), as a learned limit is, so that a
// queue freed and created again keeps it.
#include "cqmgr/core/scheduler.hpp"

#include <algorithm>

namespace cqmgr::core {

int share_full(const Transport& t) {
    if (t.cfg.process_limit <= 0 || t.cfg.dest_share <= 0) return 0;
    return std::max(1, t.cfg.process_limit * t.cfg.dest_share / 100);
}

} // namespace cqmgr::core
