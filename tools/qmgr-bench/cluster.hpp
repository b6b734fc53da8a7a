// `tools/bench --cluster`: two sending Postfix instances and one receiver
// that allows 5 connections and 60 messages per second from them together
// (a receiving smtpd with anvil limits, smtpd_client_connection_count_limit
// = 5 and smtpd_client_message_rate_limit = 60 per anvil_rate_time_unit =
// 1s: anvil counts in fixed windows, so 50/s evenly spaced may put a few
// more than 50 into one). Each sender gets the same share of the mail. Stock qmgr on both
// senders, then cqmgr on both sharing `cqmgr_cluster_concurrency_limits` =
// 5 and `cqmgr_rate_limits` = 50/s through one redis-server that the run
// starts. Figures: the peak of connections the receiver had (sampled every
// 50 ms), the delivery rate, and the deferrals (the receiver's 421s).
#pragma once

#include "run.hpp"
#include "workload.hpp"

namespace bench {

// Runs the pairs and prints the table; returns the exit status.
int run_cluster(const Session& session, const RunOptions& opts, int pairs);

} // namespace bench
