// cqmgr check: the configuration read as the daemon reads it at start-up,
// with every problem reported instead of the first one stopping the
// process.  An administrator (and cqmgr-enable, before it switches
// master.cf) runs it by hand; master never does.
#pragma once

#include <string>
#include <vector>

namespace cqmgr::qmgr {

struct CheckFinding {
    bool error = false; // false: a warning, the daemon would start
    std::string text;
};

// Checks the instance whose main.cf and master.cf are in `config_dir`:
// main.cf's values of the parameters cqmgr reads (with the -o settings of
// the qmgr service applied, as master passes them), the queue manager's
// master.cf line and its command in daemon_directory, the transports
// main.cf names, and what a chrooted queue manager needs.
std::vector<CheckFinding> self_check(const std::string& config_dir);

// `cqmgr check [-c config_dir]`: prints each finding and returns the exit
// status (0 without errors, 1 with, 64 on a usage error).
int run_self_check(int argc, char** argv);

} // namespace cqmgr::qmgr
