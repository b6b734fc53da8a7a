// Delivery agents: opens connections to `private/<transport>` when the
// scheduler asks for them, hands each ready agent the entry the scheduler
// selects, and reports the agent's reply (or its failure) back.  A crashed,
// silent or babbling agent costs only a deferral of its entry.  The
// features hear of each delivery through the queue manager's observers
// (delivery_observer.hpp), from its start to its end, in one event that
// carries the reply converted once.
#pragma once

#include "clock.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/protocol/agent_call.hpp"
#include "delivery_observer.hpp"
#include "delivery_record.hpp"
#include "delivery_request.hpp"

namespace cqmgr::qmgr {

class Delivery : public DeliveryObserver {
  public:
    // `observers` hear of every delivery; they outlive this object.
    Delivery(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
             core::Scheduler& sched, DeliveryObservers& observers);

    // Starts connections for every transport that has work (coalesced: many
    // calls in one loop pass cost one pass).
    void pump();
    // The deliveries in flight and each destination's last hop status.
    const DeliveryRecord& record() const { return record_; }
    // DeliveryObserver: message `m` is about to be destroyed (its runs
    // of the request go).
    void message_ended(const Message& m) override { request_heads_.forget(m); }

  private:
    // One delivery: the connection to the transport's agent, then the
    // entry the scheduler selects for it (delivery.cpp).
    class Call;
    friend class Call;
    // The agent of `c` announced itself (ok) or could not be reached.
    void announced(Call& c, bool ok);
    // The same after the transport's rate delay, if any: hands the agent
    // the entry the scheduler selects, or reports the failure.
    void go(Call& c, bool ok);
    // The agent answered the request of `c` (or failed to).
    void replied(Call& c, protocol::DeliveryOutcome&& out);
    // The request for entry `e`, encoded for the wire into request_buf_
    // (valid until the next call), as the observers of `ev` asked.
    std::string_view encoded_request_for(const core::Entry& e, const DeliveryEvent& ev);
    // -v: the entry about to go to an agent.
    void trace_request(const core::Entry& e) const;
    // -v: an agent connection that carries no request (there should be none).
    void trace_idle(const core::Transport& t) const;
    // The agent timeouts from main.cf.
    protocol::DeliveryTimeouts timeouts() const;
    // Logs what went wrong with the agent's reply, converts it into the
    // outcome of `c`'s event (taking its strings) and hands that to the
    // observers, the scheduler, and the observers again.
    void report(Call& c, protocol::DeliveryOutcome&& out);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const WallClock& clock_;
    core::Scheduler& sched_;
    DeliveryRecord record_;
    DeliveryObservers& observers_;
    bool posted_ = false;
    // Where requests are encoded: a send copies only what the socket does
    // not take at once, so one buffer serves every delivery.
    std::string request_buf_;
    // The last message's runs of its request, for its next entry.
    RequestHeadCache request_heads_;
};

// The agent's outcome `out` as the scheduler takes it (its hop status's
// strings are moved).
core::DeliveryResult delivery_result(protocol::DeliveryOutcome&& out);

} // namespace cqmgr::qmgr
