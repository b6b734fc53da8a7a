// Runs a program and collects what it prints: cqmgrctl asks postconf for
// the configuration, as Postfix's own tools do.
#pragma once

#include <string>
#include <vector>

namespace cqmgr::ctl {

struct ProcessResult {
    int exit_status = -1; // the exit code; -1 when killed by a signal
    bool started = false; // false when the program could not be executed
    std::string out;
    std::string err;
};

// Runs argv[0] (searched in PATH) with standard input from /dev/null and
// waits for it.
ProcessResult run_process(const std::vector<std::string>& argv);

} // namespace cqmgr::ctl
