// `tools/bench --dead-restart`: what a restart costs a destination that is
// known to be dead, which the destination state store keeps across it. A destination refusing
// connections dies, the queue manager is killed (kill -9) half a second later, and new mail for the
// destination arrives; then the same for a second destination with `postfix reload` instead of kill
// -9. The figure is the number of connection attempts to it after each restart, while its dead time
// (minimal_backoff_time, 60 s) has not run out: stock has forgotten the destination and tries
// again; cqmgr keeps it dead in its state store (cqmgr_state_database, on by default) and defers
// the mail with the same reason. Stock and cqmgr run alternately, --pairs times.
#pragma once

#include "run.hpp"
#include "workload.hpp"

namespace bench {

// Runs the pairs and prints the table; returns the exit status.
int run_dead_restart(const Session& session, const RunOptions& opts, int pairs);

} // namespace bench
