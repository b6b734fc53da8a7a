// The daemon after the jail (Postfix's post-jail step): the loop, master's
// link and the queue manager, given what pre_jail() opened for it.
#pragma once

#include "clock.hpp"
#include "daemon_config.hpp"
#include "master_link.hpp"
#include "pre_jail.hpp"
#include "queue_manager.hpp"

#include <memory>
#include <optional>

namespace cqmgr::qmgr {

// One thread runs the loop and does all I/O; other threads (the metrics
// listener's) only post to it.  So the reactor need not lock around each
// socket operation, while posting stays safe.
struct Daemon {
    DaemonConfig& config;
    Preopened& opened;
    asio::io_context io{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
    std::unique_ptr<QueueManager> qm{}; // goes after the master link
    std::optional<MasterLink> master{};
    SystemClock clock{};
};

// Builds master's link (its triggers go to the queue manager) and the queue
// manager, and hands it the tables and channels opened before the jail.
void post_jail(Daemon& d);

// What the metrics endpoint shows now (on the loop thread).
MetricsSnapshot daemon_metrics(const Daemon& d);
// What /readyz waits for that is done (health.hpp's bits; on the loop
// thread).
unsigned daemon_readiness(const Daemon& d);

} // namespace cqmgr::qmgr
