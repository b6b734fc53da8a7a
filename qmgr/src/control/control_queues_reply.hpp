// The reply to the control socket's `queues` query
// (docs/control-protocol.md): each transport's state and, by name, every
// destination's: window, in flight and waiting, dead, suspended and
// throttled, the last hop status, the cohort feedback, the rate delay, the
// share and what the adaptive limits learned.  It is the one query a poller
// sends again and again, so its tree is kept between requests and refilled
// in place (control::Refill): with 1,000 destinations building and freeing a
// fresh tree cost more than serialising it.
#pragma once

#include "cqmgr/control/refill.hpp"
#include "cqmgr/control/reply.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <vector>

namespace cqmgr::qmgr {

struct ControlSources;

class QueuesReply {
  public:
    using Json = control::Json;

    // The reply for `transports`, read from `src`; valid until the next
    // call.
    const Json& fill(const ControlSources& src,
                     const std::vector<const core::Transport*>& transports);

  private:
    static void fill_transport_state(control::Refill& j, const core::Transport& t, int busy,
                                     int todo);
    static void fill_queue_state(const ControlSources& src, Json& out, const core::Transport& t,
                                 const core::Queue& q);

    Json reply_;
};

} // namespace cqmgr::qmgr
