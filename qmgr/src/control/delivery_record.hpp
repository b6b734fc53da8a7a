// What the control socket shows of deliveries (docs/control-protocol.md):
// the requests in flight now, with when each started, and per destination
// the last hop status an agent reported.  Delivery keeps it up to date; it
// changes nothing about deliveries themselves.
#pragma once

#include "clock.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <boost/intrusive/list.hpp>
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

    // One delivery in flight: its entry and when the request went out.
    // The caller keeps it (the delivery's call holds one), so that the
    // record costs no allocation per delivery; it leaves the record when
    // finished, or when it is destroyed.
    struct InFlight : boost::intrusive::list_base_hook<
                          boost::intrusive::link_mode<boost::intrusive::auto_unlink>> {
        const core::Entry* entry = nullptr;
        protocol::TimeVal started{};
    };
    // Counted when asked (a control query), not on every delivery.
    using InFlightList =
        boost::intrusive::list<InFlight, boost::intrusive::constant_time_size<false>>;

    explicit DeliveryRecord(const core::Scheduler& sched) : sched_(sched) {}

    // Entry `e` has just been sent to an agent; `f` stands for it.
    void started(InFlight& f, const core::Entry& e, const WallClock& clock);
    // The agent's outcome for the entry of `f` is in; called before the
    // scheduler frees the entry.  `hop` is the hop status the agent reported
    // (empty status: none).
    void finished(InFlight& f, const core::Dsn& hop, const WallClock& clock);

    // The entries in flight, with when each was sent.  An entry here is
    // busy in the scheduler, so it and its queue, transport and message
    // are alive.
    const InFlightList& in_flight() const { return in_flight_; }
    // The last hop status reported for queue `q`, or nullptr.
    const LastDsn* last_dsn(const core::Queue& q) const;

  private:
    static std::string key(const std::string& transport, const std::string& queue);
    // Forgets destinations the scheduler no longer has, once there are
    // clearly more of them than live queues.
    void prune();

    const core::Scheduler& sched_;
    InFlightList in_flight_;
    std::unordered_map<std::string, LastDsn> last_;
};

} // namespace cqmgr::qmgr
