// `tools/bench --cluster`: two sending Postfix instances and one receiver
// that allows 5 connections and 110 messages per anvil window from them
// together (a receiving smtpd with anvil limits,
// smtpd_client_connection_count_limit = 5 and smtpd_client_message_rate_limit
// = 110 per anvil_rate_time_unit = 1s: anvil's window spans one to two clock
// seconds, so 50/s evenly spaced puts up to 100 into one; with
// --cluster-rate N, N/s and 2N+10). Each sender gets the same share of the
// mail. Stock qmgr on both
// senders, then cqmgr on both sharing `cqmgr_cluster_concurrency_limits` =
// 5 and `cqmgr_rate_limits` = 50/s through one redis-server that the run
// starts (a cqmgr run that ever falls back to local limits fails). Figures:
// the receiver's peak connection count (anvil's own, and sampled every
// 50 ms), the delivery rate, the deferrals and the receiver's refusals by
// cause (connection count, message rate).
#pragma once

#include "run.hpp"
#include "workload.hpp"

namespace bench {

// Runs the pairs and prints the table; returns the exit status.  `rate`:
// cqmgr's shared rate limit, messages per second (the acceptance's is 50;
// far above what 5 connections carry, the connection count is the limit).
int run_cluster(const Session& session, const RunOptions& opts, int pairs, int rate);

} // namespace bench
