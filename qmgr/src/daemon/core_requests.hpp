// The changes the features ask of the scheduler, made where they may be.
//
// The scheduler tells its driver of a queue's window, death or revival
// from inside its own operations (core::Driver), and panics when the
// driver calls back into it from there (core::Scheduler::in_callback).  A
// feature that wants a change on such news (a lowered destination share
// when a destination dies) asks here: outside a callback the change is made
// at once; inside one it waits, in order, for the loop's next turn, when
// the scheduler's call has long returned.
#pragma once

#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/protocol/asio.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace cqmgr::qmgr {

class CoreRequests {
  public:
    CoreRequests(asio::io_context& io, core::Scheduler& sched) : io_(io), sched_(sched) {}

    // core::Scheduler::set_limit(), now or once the callback has returned.
    void set_limit(const core::AdminTarget& target, const core::LimitChange& change);
    // core::Scheduler::set_sender_rule() (a reply rule's bound on group
    // `g`'s mail on one queue), the same way, in the same order.
    void set_sender_rule(const core::AdminTarget& target, core::SenderGroup g,
                         const std::optional<core::RuleLimit>& rule);
    // The scheduler, to read.
    const core::Scheduler& scheduler() const { return sched_; }

  private:
    // Makes the changes that waited.
    void apply_pending();

    asio::io_context& io_;
    core::Scheduler& sched_;
    // A change that waits: of a bound on the target, or with a group
    // (not 0) of that group's rule there (the change's rule).
    struct Pending {
        core::AdminTarget target;
        core::LimitChange change;
        core::SenderGroup group = 0;
    };
    std::vector<Pending> pending_;
};

} // namespace cqmgr::qmgr
