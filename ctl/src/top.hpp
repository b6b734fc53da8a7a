// `cqmgrctl top`: polls `summary` and `queues` over one connection every
// interval and redraws the terminal with render_top() until q, Ctrl-C or a
// terminating signal.  A lost connection is shown in the frame and retried
// at each interval; the last data stays on the screen meanwhile.
#pragma once

#include "options.hpp"

#include <string>

namespace cqmgr::ctl {

// Runs the view on the socket at `path`.  Throws ControlError when the
// first connection or poll fails; returns 1 after printing the daemon's
// error when the first poll is refused, else 0 when the user quits.
int run_top(const std::string& path, const Options& opts);

} // namespace cqmgr::ctl
