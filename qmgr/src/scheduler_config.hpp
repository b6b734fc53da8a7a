// The scheduler core's settings, made from main.cf as conf/ reads it: the
// global ones from QmgrParams at start-up, and each transport's from its
// TransportParams the first time the scheduler meets the transport.  These
// are the only conversions between the two; the daemon reads no parameter
// in any other way.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/conf/transport_params.hpp"
#include "cqmgr/core/structures.hpp"

#include <string>
#include <vector>

namespace cqmgr::qmgr {

// The global scheduler settings.
core::SchedulerConfig scheduler_config(const conf::QmgrParams& p);
// One transport's scheduler settings.
core::TransportConfig transport_config(const conf::TransportParams& t);
// A feedback value in the core's terms.
core::Feedback core_feedback(const conf::Feedback& f);

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
