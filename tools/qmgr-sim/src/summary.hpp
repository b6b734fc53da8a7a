// The text report of qmgr-sim: totals, per transport its agents, per
// destination what it delivered and the concurrency it ran at, per message
// (in natural order: small#2 before small#10) its arrival, when it was done
// and its delay; with shared receivers or reply rules, per receiver its
// peaks and refusals and each rule's action as it started and ended;
// optionally the timeline of sessions per destination.
#pragma once

#include "cqmgr/core/simulation.hpp"

#include <ostream>

namespace cqmgr::sim {

// Writes the report of `result`, a run of `config`.
void print_summary(const core::SimConfig& config, const core::SimResult& result, std::ostream& out);

// Writes the sessions of each destination at each sample.
void print_timeline(const core::SimResult& result, std::ostream& out);

} // namespace cqmgr::sim
