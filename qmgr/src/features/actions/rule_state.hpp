// The reply rules' actions in the state store: the actions in force are
// kept in the control settings' document (AdminState, next to the
// administrator's suspensions and throttles), rewritten whenever one
// starts, counts a delivery or ends, and taken up again at start-up.
#pragma once

#include "admin_state.hpp"
#include "reply_actions.hpp"

namespace cqmgr::qmgr {

// Has `state` keep what `actions` has in force (`state` outlives it, or
// this is called again with nullptr first).
void keep_rule_actions(ReplyActions& actions, const AdminState* state);
// Gives `actions` what `state` kept.
void restore_rule_actions(ReplyActions& actions, const AdminState& state);

} // namespace cqmgr::qmgr
