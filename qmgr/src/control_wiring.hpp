// What joins the control socket's parts: a parsed request becomes a
// ControlCommand for the commands.
#pragma once

#include "control_commands.hpp"
#include "cqmgr/control/request.hpp"

namespace cqmgr::qmgr {

// The command that a (command) request from user `uid` asks for.
ControlCommand control_command(const control::Request& r, int64_t uid);

} // namespace cqmgr::qmgr
