// --plot FILE.png: the timeline drawn by gnuplot, three panels over
// simulated time: each destination's concurrency window and open sessions,
// each transport's busy agents (with its master.cf process limit), and the
// recipients delivered and deferred so far.
#pragma once

#include "timeline_csv.hpp"

#include <stdexcept>
#include <string>

namespace cqmgr::sim {

// gnuplot is missing or failed.
struct PlotError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The gnuplot script that draws `result` into `png`; `title` heads it.
std::string gnuplot_script(const core::SimConfig& config, const core::SimResult& result,
                           const std::string& png, const std::string& title);

// Runs gnuplot (from PATH) on `script`; throws PlotError.
void run_gnuplot(const std::string& script);

} // namespace cqmgr::sim
