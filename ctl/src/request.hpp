// The request line cqmgrctl sends for its command line.  The requests, their
// word counts and the line's limit are the protocol's own (control/,
// docs/control-protocol.md); cqmgrctl checks them before anything is sent.
#pragma once

#include <string>
#include <vector>

namespace cqmgr::ctl {

// The line to send (without its '\n') for `name` and `args`.  Throws
// UsageError when the arguments do not fit the request, when an argument
// holds a byte the protocol refuses (which would also let an argument smuggle
// a second request in with a newline), or when the line is too long.
// Unknown request names pass unchecked, for a daemon newer than cqmgrctl.
std::string request_line(const std::string& name, const std::vector<std::string>& args);

} // namespace cqmgr::ctl
