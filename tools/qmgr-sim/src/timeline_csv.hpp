// The timeline of a simulation as a table: one row per sample (every
// sample_every seconds and at the end), one column per quantity, written
// as CSV (--csv) and drawn by gnuplot (--plot).  Columns, in order:
//   time                  simulated seconds
//   delivered, deferred   recipients finished so far
//   messages_done         messages with every recipient finished
//   agents:T, waiting:T   transport T's busy agents, and its connections
//                         waiting for a free agent (master.cf maxproc)
//   window:D, sessions:D  destination D's concurrency window (empty while
//                         it has no queue, 0 while dead) and its sessions
//   delivered:D, deferred:D
//   held:D                1 while no new delivery may start there (a reply
//                         rule's suspension); only when a feature acted
//   sessions:provider:P   the sessions shared receiver P has at once
#pragma once

#include "cqmgr/core/simulation.hpp"

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace cqmgr::sim {

struct Column {
    std::string name;
    // The value in one sample; nullopt leaves the field empty.
    std::function<std::optional<double>(const core::SimSample&)> value;
};

// The columns of `result`'s timeline, for the transports and destinations
// of `config`.
std::vector<Column> timeline_columns(const core::SimConfig& config, const core::SimResult& result);

// Writes the timeline as CSV (a header line first; lines end in LF).
void write_csv(const std::vector<Column>& columns, const core::SimResult& result,
               std::ostream& out);

// `text` as one CSV field: quoted when it holds a comma, a quote or a line end.
std::string csv_field(const std::string& text);

} // namespace cqmgr::sim
