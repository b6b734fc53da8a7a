// Delivery agents: opens connections to `private/<transport>` when the
// scheduler asks for them, hands each ready agent the entry the scheduler
// selects, and reports the agent's reply (or its failure) back.  A crashed,
// silent or babbling agent costs only a deferral of its entry.
#pragma once

#include "adaptive.hpp"
#include "clock.hpp"
#include "cluster_limits.hpp"
#include "counters.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/protocol/agent_call.hpp"
#include "delivery_record.hpp"
#include "delivery_request.hpp"
#include "isolation.hpp"

#include <functional>

namespace cqmgr::qmgr {

class Delivery {
  public:
    Delivery(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
             core::Scheduler& sched, Counters& counters);

    // Starts connections for every transport that has work (coalesced: many
    // calls in one loop pass cost one pass).
    void pump();
    // Shared limits to consult and tell of each delivery (none by default).
    void use_limits(ClusterLimits* limits) { limits_ = limits; }
    // The deliveries in flight and each destination's last hop status.
    const DeliveryRecord& record() const { return record_; }
    // `ended` is told of every delivery that reached an agent (before the
    // scheduler hears of it): its queue and the hop status (empty status:
    // none, the agent crashed).
    void observe_ends(std::function<void(const core::Queue&, const core::Dsn&)> ended) {
        ended_ = std::move(ended);
    }
    // Feeds every outcome on the transports it covers to `adaptive` (none:
    // off).  It must outlive this object.
    void set_adaptive(AdaptiveLimits* adaptive) { adaptive_ = adaptive; }
    // Message `m` is about to be destroyed.
    void forget(const Message& m) { request_heads_.forget(m); }
    // Feeds every outcome on transports with destination shares to
    // `isolation` (none: off).  It must outlive this object.
    void set_isolation(Isolation* isolation) { isolation_ = isolation; }

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
    // (valid until the next call).
    std::string_view encoded_request_for(const core::Entry& e);
    // -v: the entry about to go to an agent.
    void trace_request(const core::Entry& e) const;
    // -v: an agent connection that carries no request (there should be none).
    void trace_idle(const core::Transport& t) const;
    // The agent timeouts from main.cf.
    protocol::DeliveryTimeouts timeouts() const;
    // Hands the agent's outcome for the entry of `c` to the scheduler,
    // after counting it and showing it to the adaptive limits (with how
    // many deliveries its queue had in flight when it was sent, and where
    // its message's defer log ended then).  Takes the reply's strings.
    void report(Call& c, protocol::DeliveryOutcome&& out);
    // Milliseconds since the epoch (the adaptive limits' clock).
    int64_t now_ms() const;
    // Counts the outcome of entry `e` and fires the delivery__end probe.
    void observe(const core::Entry& e, const protocol::DeliveryOutcome& out,
                 std::chrono::steady_clock::time_point started);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const WallClock& clock_;
    core::Scheduler& sched_;
    DeliveryRecord record_;
    Counters& counters_;
    AdaptiveLimits* adaptive_ = nullptr;
    Isolation* isolation_ = nullptr;
    bool posted_ = false;
    // Where requests are encoded: a send copies only what the socket does
    // not take at once, so one buffer serves every delivery.
    std::string request_buf_;
    // The last message's runs of its request, for its next entry.
    RequestHeadCache request_heads_;
    std::function<void(const core::Queue&, const core::Dsn&)> ended_;
    ClusterLimits* limits_ = nullptr;
};

} // namespace cqmgr::qmgr
