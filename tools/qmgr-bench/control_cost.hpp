// `tools/bench --control-cost`: what the control socket and the metrics
// endpoint cost the daemon when the active queue is full. 20,000 one-recipient
// messages (times --scale) over 1,000 destinations are fed into the active
// queue of one cqmgr whose smtp transport is suspended, so that they stay
// there; then each kind of request is sent many times and the daemon's CPU
// time (all its threads, from /proc/PID/task/*/schedstat) is divided by the
// count, less what the idle daemon uses over the same time.
#pragma once

#include "run.hpp"
#include "workload.hpp"

namespace bench {

// Runs the measurement and prints its table; returns the exit status.
int run_control_cost(const Session& session, const RunOptions& opts);

} // namespace bench
