// The scheduler settings of a simulation, from Postfix's configuration as
// the daemon reads it: main.cf through conf::MainCf with Postfix's
// defaults, value syntax and $name expansion, QmgrParams and each
// transport's TransportParams (the `<transport>_` forms and their
// `default_` fallbacks), converted by the daemon's own scheduler_config
// functions; and each transport's process limit from master.cf.
#pragma once

#include "workload.hpp"

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::sim {

// Where Postfix's configuration comes from; all empty: Postfix's defaults.
struct PostfixSources {
    std::string config_dir; // -c DIR: DIR/main.cf and DIR/master.cf
    std::string main_cf;    // --main-cf FILE (instead of DIR/main.cf)
    std::string master_cf;  // --master-cf FILE (instead of DIR/master.cf)
    // -o name=value, over main.cf and the workload's main_cf.
    std::vector<std::pair<std::string, std::string>> overrides;
};

// A configuration the daemon would refuse, or a file that cannot be read.
struct ConfigProblem : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Fills workload.sim's scheduler, transports and process limits from
// `sources` and the workload's main_cf and master_cf; warnings (as the
// daemon would log them) go to `warn`.  Throws ConfigProblem.
void apply_postfix_config(const PostfixSources& sources, Workload& workload,
                          const std::function<void(const std::string&)>& warn);

} // namespace cqmgr::sim
