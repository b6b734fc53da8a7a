// The bounds on transports and queues (limits.hpp) as the scheduler keeps
// them: what is kept by name (LimitBook) reaches every queue and transport
// it covers, now or created later; holds and caps end by themselves; a
// change lets jobs that were waiting for those queues go again.  Also the
// administrator's flush of what a target covers.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <vector>

namespace cqmgr::core {

struct Core;

class LimitControl {
  public:
    explicit LimitControl(Core& c) : c_(c) {}

    // Scheduler::set_limit.
    bool set(const AdminTarget& target, const LimitChange& change);
    bool set(Queue& q, const LimitChange& change);
    const LimitBook& book() const { return book_; }
    // Gives transport `t` its copy of what covers it.
    void apply(Transport& t);
    // Gives queue `q` its copies of what covers it (its gate stays).
    void apply(Queue& q);
    // A hold's, cap's or rule's timer is due: it ends unless replaced since.
    void expire(Bound which, const AdminTarget& target, int64_t due);
    // Scheduler::admin_flush and Scheduler::admin_queues.
    std::vector<AdminTarget> flush(const AdminTarget& target);
    std::vector<Queue*> queues(const AdminTarget& target) const;
    // Checks the copies against the book, and each timed setting's timer.
    void check() const;

  private:
    // A setting of bound `which` of `target` changed: renew the copies it
    // covers.
    void changed(const AdminTarget& target, Bound which);

    Core& c_;
    LimitBook book_;
};

} // namespace cqmgr::core
