// The dead backlog (cqmgr_dead_backlog = yes; off by default): deferred
// mail for destinations that are still dead costs next to nothing.
//
// Stock moves every due deferred file into the active queue, reads it,
// resolves its recipients, finds their destinations dead, has the retry
// service write a defer log record and a log line per recipient, and moves
// the file back.  With the dead backlog, the deferred scan asks postpone()
// about each due file before it takes it.  A file that cqmgr deferred
// itself is in the DeferredIndex (shared with the recovery ramp) with its
// destinations, arrival and delay warning time; when the policy
// (dead_backlog_policy.hpp) says so, because every one of its
// destinations is dead in the scheduler now, the file stays in deferred
// and only its not-before time (mtime) moves ahead by the backoff a
// deferral would give it.  Its defer log keeps the last reasons, so
// postqueue -p still tells the truth.  Each pass that postponed files logs
// one summary line instead of a line per recipient.
//
// Everything else is taken as stock takes it: files not in the index (at
// start-up, or deferred by another queue manager; they are learned when
// cqmgr defers them), explicit requests (postqueue -f, g+r, g+x), files
// due for expiry or a delay warning, and files with a destination that is
// not dead (unknown, or revived: the first attempts probe it again).
#pragma once

#include "clock.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "deferred_index.hpp"

#include <random>
#include <string>
#include <sys/types.h>
#include <unordered_set>

namespace cqmgr::qmgr {

class DeadBacklog {
  public:
    DeadBacklog(const conf::QmgrParams& params, const WallClock& clock,
                const queuefile::ActiveQueue& store, core::Scheduler& sched, DeferredIndex& index);

    bool on() const { return params_.cqmgr_dead_backlog; }
    // Asked for each due file `id` of the deferred scan (`scan_flags` are
    // the scan's, `mode` the file's): true when the file stays in deferred
    // (postponed, or gone meanwhile), false when the scan takes it.
    bool postpone(const std::string& id, int scan_flags, mode_t mode);
    // A pass of the deferred scan ended: logs what it postponed.
    void pass_done();

  private:
    // True when `destination` (transport:nexthop) is dead in the scheduler
    // now: its transport, or its queue.
    bool dead(const std::string& destination) const;

    const conf::QmgrParams& params_;
    const WallClock& clock_;
    const queuefile::ActiveQueue& store_;
    core::Scheduler& sched_;
    DeferredIndex& index_;
    std::mt19937_64 jitter_random_;
    // This pass: files postponed, and their destinations.
    long postponed_ = 0;
    std::unordered_set<std::string> destinations_;
};

} // namespace cqmgr::qmgr
