// Each transport's process limit, from master.cf, for the priority lanes'
// shares (cqmgr_urgent_agent_share, cqmgr_bulk_agent_share are percentages
// of it), the destinations' (cqmgr_destination_agent_share), and for the
// finch policy's shares of a transport's agents.  Stock qmgr never reads
// master.cf; cqmgr reads it only when a priority table or a destination
// share is set or a transport's policy is finch, once, before the jail.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace cqmgr::qmgr {

// The max_proc of every unix service in $config_directory/master.cf ("-"
// is default_process_limit; 0, no limit, is left out).  An unreadable or
// invalid master.cf gives a warning and no limits (the shares are then off).
std::map<std::string, int64_t> transport_process_limits(const conf::QmgrParams& params);

} // namespace cqmgr::qmgr
