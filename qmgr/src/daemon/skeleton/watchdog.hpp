// The daemon's watchdog, as stock's qmgr_daemon_timeout: if one pass of the
// event loop takes longer than that, the process is stuck, and it dies so
// that master starts a fresh one.
#pragma once
#include "cqmgr/protocol/asio.hpp"

#include <cstdint>

namespace cqmgr::qmgr {

class Watchdog {
  public:
    // Arms the alarm for `period` seconds and re-arms it from a timer on
    // `io` every third of that while the loop is alive.
    Watchdog(asio::io_context& io, int64_t period);
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

  private:
    // Re-arms the alarm and schedules the next call.
    void pet();

    asio::steady_timer timer_;
    int64_t period_;
};

} // namespace cqmgr::qmgr
