// cqmgr_scheduler_policy and <transport>_cqmgr_scheduler_policy: which job
// selection policy a transport uses, Rak's preemption (rak, stock's) or
// each job's concurrency scaled by the free agents (finch).  Any other
// value stops the daemon, as a bad number does.
#pragma once

#include "cqmgr/conf/main_cf.hpp"

#include <string>
#include <string_view>

namespace cqmgr::conf {

// True when `value` names a policy: rak or finch.
bool scheduler_policy_known(std::string_view value);

// Throws ConfigError (with the file and line of parameter `name`) unless
// `value` names a policy.
void check_scheduler_policy(const MainCf& cf, const std::string& name, const std::string& value);

} // namespace cqmgr::conf
