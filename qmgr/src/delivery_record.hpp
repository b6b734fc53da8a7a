// What the control socket shows of deliveries (docs/control-protocol.md):
// the requests in flight now, with when each started, and per destination
// the last hop status an agent reported.  Delivery keeps it up to date; it
// changes nothing about deliveries themselves.
#pragma once

#include "clock.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <string>
#include <unordered_map>

namespace cqmgr::qmgr {

class DeliveryRecord {
  public:
    // A hop status and when it was reported (Unix seconds).
    struct LastDsn {
        core::Dsn dsn;
        int64_t when = 0;
    };

    explicit DeliveryRecord(const core::Scheduler& sched) : sched_(sched) {}

    // Entry `e` has just been sent to an agent.
    void started(const core::Entry& e, const WallClock& clock);
    // The agent's outcome for `e` is in; called before the scheduler frees
    // `e`.  `hop` is the hop status the agent reported (empty status: none).
    void finished(const core::Entry& e, const core::Dsn& hop, const WallClock& clock);

    // The entries in flight, with when each was sent.  An entry here is
    // busy in the scheduler, so it and its queue, transport and message
    // are alive.
    const std::unordered_map<const core::Entry*, protocol::TimeVal>& in_flight() const {
        return in_flight_;
    }
    // The last hop status reported for queue `q`, or nullptr.
    const LastDsn* last_dsn(const core::Queue& q) const;

  private:
    static std::string key(const std::string& transport, const std::string& queue);
    // Forgets destinations the scheduler no longer has, once there are
    // clearly more of them than live queues.
    void prune();

    const core::Scheduler& sched_;
    std::unordered_map<const core::Entry*, protocol::TimeVal> in_flight_;
    std::unordered_map<std::string, LastDsn> last_;
};

} // namespace cqmgr::qmgr
