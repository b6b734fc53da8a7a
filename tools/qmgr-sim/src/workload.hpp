// The workload file of qmgr-sim (TOML): the simulated destinations, the
// messages and when they arrive, and optionally Postfix settings that
// belong to the experiment (`main_cf`, `master_cf`) on top of the main.cf
// and master.cf given on the command line.  Every key is listed in one
// table (workload.cpp, `keys`); any other key is an error that names the
// file, the line and the key.  Times are seconds, as a TOML number or in
// Postfix's form ("5s", "1m", "2h").
#pragma once

#include "cqmgr/core/simulation.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::sim {

// A workload file that cannot be used; what() is "FILE:LINE: text".
struct WorkloadError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Workload {
    // Destinations, messages and the simulation's own settings; the
    // scheduler and transport settings are filled from Postfix's
    // configuration later (postfix_config.hpp).
    core::SimConfig sim;
    // main_cf = { name = value, ... } as main.cf text, each setting on its
    // line of the workload file (so that Postfix's messages name it), read
    // after main.cf itself.
    std::string main_cf;
    std::string origin; // the workload file
    // master_cf = """...""": master.cf lines, over the master.cf file's.
    std::string master_cf;
    // The feedback arithmetic of Postfix's published pseudocode, without
    // 3.7's half-step margin (to compare with the published measurements).
    bool readme_arithmetic = false;
    // reply_actions = """...""": a pcre: table's text, the reply rules
    // that act (over main.cf's cqmgr_reply_actions).
    std::string reply_actions;
    // cqmgr's opt-in features (sim_features.hpp), made by
    // apply_postfix_config when one is on; pass to core::simulate().
    std::shared_ptr<core::SimHooks> hooks;
};

// Reads and checks a workload file; throws WorkloadError.
Workload read_workload(const std::string& path);
// The same from text; `origin` names it in errors.
Workload parse_workload(std::string_view text, const std::string& origin);

// True when `name` is a parameter the workload's main_cf table may set:
// one of Postfix's that qmgr reads, a per-transport form of one, or one of
// cqmgr's that the simulation uses.
bool known_parameter(std::string_view name);

} // namespace cqmgr::sim
