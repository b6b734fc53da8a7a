// The end of a message, once none of its entries is in flight, in stock's
// order: the bounce service sends the notice for recipients that bounced;
// a file an agent found corrupt goes to corrupt/; recipients still in the
// file are read next (the end then comes again later); the trace service
// reports where asked; an undelivered message expires or gets its delay
// warning (end_plan.hpp); last, the file is removed, or deferred until its
// next attempt.  Failed file moves are retried (store_retry.hpp).
#pragma once

#include "clock.hpp"
#include "counters.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "end_plan.hpp"
#include "intake.hpp"
#include "message.hpp"
#include "recovery_ramp.hpp"
#include "service_slots.hpp"
#include "store_retry.hpp"

#include <random>

namespace cqmgr::qmgr {

class MessageEnd {
  public:
    enum class Outcome {
        over, // the file left (or is leaving) active: forget the message
        more, // another batch of recipients was read: assign it
    };

    MessageEnd(const conf::QmgrParams& params, const WallClock& clock,
               const queuefile::ActiveQueue& store, StoreRetry& retry, Intake& intake,
               core::Scheduler& sched, Counters& counters, RecoveryRamp& ramp, ServiceSlots& slots);

    // The common end, every recipient done with nothing to report: removes
    // the file at once and returns true; false when finish() is needed.
    bool finish_now(const Message& m);
    // The whole end.
    awaitable<Outcome> finish(Message& m);
    // Moves the file to corrupt/ with stock's warning.
    void quarantine(const std::string& id);

  private:
    // Removes the file and logs "ID: removed".
    void remove(const std::string& id);
    std::chrono::seconds ipc_timeout() const {
        return std::chrono::seconds(params_.qmgr_ipc_timeout);
    }

    const conf::QmgrParams& params_;
    const WallClock& clock_;
    const queuefile::ActiveQueue& store_;
    StoreRetry& retry_;
    Intake& intake_;
    core::Scheduler& sched_;
    Counters& counters_;
    // The random source of cqmgr_backoff_jitter (seeded from the kernel,
    // which works in a chroot without /dev/urandom too).
    std::mt19937_64 jitter_random_{random_seed()};
    RecoveryRamp& ramp_;
    ServiceSlots& slots_;
};

} // namespace cqmgr::qmgr
