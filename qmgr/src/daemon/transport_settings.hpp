// The scheduler's per-transport settings, read from main.cf the first time
// the scheduler meets a transport, with what stock logs at that moment.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/conf/transport_params.hpp"
#include "cqmgr/core/structures.hpp"

#include <string>
#include <vector>

namespace cqmgr::qmgr {

// The scheduler's per-transport lookup: reads a transport's parameters on
// first use, logs what stock logs then (malformed feedback warnings, and
// the feedback settings with destination_concurrency_feedback_debug), and
// stops the daemon on a bad value, as stock qmgr does.
class TransportSettings {
  public:
    TransportSettings(const conf::MainCf& cf, const conf::QmgrParams& params);

    // The scheduler settings of `transport`.
    core::TransportConfig operator()(const std::string& transport);

  private:
    const conf::QmgrParams& params_;
    std::vector<std::string> warnings_; // from reading the current transport
    conf::TransportTable table_;
};

} // namespace cqmgr::qmgr
