// The daemon's two ways out besides a fatal error, both as stock takes
// them: master went away or is reloading (or a signal came), and a table
// changed.  Either way the process stops at once (messages in active are
// picked up by the next queue manager), after what cqmgr adds first: spare
// shared concurrency leases go back, so that the next queue manager (and
// the other hosts) need not wait for them to expire; the destination
// state's last commit; and the metrics endpoint's thread ends before exit()
// runs the static destructors, which it must not outlive.
#pragma once
#include "cqmgr/protocol/asio.hpp"
#include "metrics_endpoint.hpp"
#include "queue_manager.hpp"
#include "table_watch.hpp"

namespace cqmgr::qmgr {

// Master went away or is reloading: stops the loop and exits.  `qm` and
// `metrics` may be null (not made yet, or not configured).
[[noreturn]] void stop_daemon(asio::io_context& io, QueueManager* qm, MetricsEndpoint* metrics);

// Like stock, looks at the tables before taking a trigger: when one has
// changed, logs so and exits, so that a new process picks up their new
// contents, and the trigger too.
void restart_if_tables_changed(const TableWatch& tables, QueueManager* qm,
                               MetricsEndpoint* metrics);

} // namespace cqmgr::qmgr
