// cqmgr's opt-in features in a simulation, as the daemon runs them:
//   providers       which destinations are a provider's members
//                   (cqmgr_provider_maps by domain, else the workload's
//                   `provider` of each destination), and the providers'
//                   limits through the core's gate (provider_gates.hpp);
//   reply rules     cqmgr_reply_actions (or the workload's reply_actions
//                   text): the daemon's own ReplyActions, on the simulated
//                   clock, whose actions become the queues' rule bounds;
//                   each start and end is recorded for the report;
//   sender limits   cqmgr_sender_limits: the daemon's SenderGroups gives
//                   each message with a `sender` its group and the
//                   scheduler the group's limit.
// The daemon's log lines (a rule that acts, a warning) go to standard
// error, as its log does when no syslog is opened.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/simulation.hpp"

#include <functional>
#include <memory>
#include <string>

namespace cqmgr::sim {

struct Workload;

// The hooks for `w`'s features from `params` (and `w.reply_actions`), or
// null when none is on.  Throws conf::ConfigError for a table that
// cannot be read.
std::shared_ptr<core::SimHooks> make_features(const conf::QmgrParams& params, const Workload& w,
                                              const std::function<void(const std::string&)>& warn);

} // namespace cqmgr::sim
