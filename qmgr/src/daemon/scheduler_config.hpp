// The scheduler core's settings, made from main.cf as conf/ reads it: the
// global ones from QmgrParams at start-up, and each transport's from its
// TransportParams the first time the scheduler meets the transport.  These
// are the only conversions between the two; the daemon reads no parameter
// in any other way.  (The per-transport lookup the scheduler calls is in
// transport_settings.hpp.)
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/conf/transport_params.hpp"
#include "cqmgr/core/structures.hpp"

namespace cqmgr::qmgr {

// The global scheduler settings; `verbose` (-v) makes the scheduler
// explain its decisions.
core::SchedulerConfig scheduler_config(const conf::QmgrParams& p, bool verbose = false);
// One transport's scheduler settings.
core::TransportConfig transport_config(const conf::TransportParams& t);
// The shares of transport `t`: its process limit, with priority lanes the
// urgent reserve and other mail's share, and one destination's share; set
// only when lanes or destination shares are on.
void share_config(core::TransportConfig& c, const conf::TransportParams& t,
                  const conf::QmgrParams& p);
// The job selection policy of transport `t` (cqmgr_scheduler_policy), and
// with finch its process limit (the agents its jobs' shares count).
void policy_config(core::TransportConfig& c, const conf::TransportParams& t,
                   const conf::QmgrParams& p);
// A policy name (rak or finch, as conf/ checked it) in the core's terms.
core::SchedulerPolicy core_policy(const std::string& name);
// A feedback value in the core's terms.
core::Feedback core_feedback(const conf::Feedback& f);

} // namespace cqmgr::qmgr
