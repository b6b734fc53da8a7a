// What joins the control socket's parts: a parsed request becomes a
// ControlCommand for the commands, and the settings the commands keep are
// shown in the `queues` reply.
#pragma once

#include "adaptive.hpp"
#include "control_commands.hpp"
#include "control_queries.hpp"
#include "cqmgr/control/request.hpp"

namespace cqmgr::qmgr {

// The command that a (command) request from user `uid` asks for.
ControlCommand control_command(const control::Request& r, int64_t uid);

// Fills "suspended" and "throttle" of a transport's (q == nullptr) or a
// destination's object in the `queues` reply from the scheduler's copies of
// the settings.
void annotate_control_state(const core::Transport& t, const core::Queue* q,
                            ControlQueries::Json& object);

// Adds to a destination's "learned" object (when it has one) the reply that
// taught it: "class", "status", "reason" and "when".
void annotate_learned(const AdaptiveLimits& adaptive, const core::Queue& q,
                      ControlQueries::Json& object);

} // namespace cqmgr::qmgr
