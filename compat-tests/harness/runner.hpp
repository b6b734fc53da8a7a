// One run of a scenario against one qmgr: set up instance and sinks, inject,
// wait for the outcome, collect it, tear everything down.
#pragma once

#include "fsutil.hpp"
#include "instance.hpp"
#include "outcome.hpp"
#include "scenario.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace compat {

struct RunOptions {
    std::string cqmgr_path;      // absolute; empty if unknown
    std::string fake_agent_path; // compat-fake-agent, absolute; empty if not built
    std::string cqmgrctl_path;   // the control client, absolute; empty if not built
    bool verbose = false;
    bool keep_on_interrupt = false; // keep the instance directory when interrupted
    bool sanitized = false;         // cqmgr has ASan/UBSan: any report of it fails the run
    // main.cf settings appended in cqmgr's runs only (--cqmgr-set), after
    // the scenario's: an opt-in feature checked against stock's behaviour.
    std::vector<std::pair<std::string, std::string>> cqmgr_main_cf;
};

struct RunResult {
    QmgrKind kind = QmgrKind::Stock;
    std::unique_ptr<WorkDir> dir; // kept or removed by the caller's decision
    Outcome outcome;
    std::vector<std::string> failures; // unmet expectations, timeouts, set-up errors
};

// Runs the scenario once; never throws Error (it becomes a failure), but
// rethrows Interrupted after tearing down.
RunResult run_once(const Scenario& scenario, QmgrKind kind, const RunOptions& opts);

} // namespace compat
