// Where the control socket is when main.cf does not say: the default of
// cqmgr_control_socket, relative to queue_directory.  The daemon creates
// the socket there and cqmgrctl looks for it there.
#pragma once

#include <string_view>

namespace cqmgr::control {

inline constexpr std::string_view default_socket_path = "private/cqmgr";

} // namespace cqmgr::control
