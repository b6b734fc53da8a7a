// The per-workload table: medians of each figure for stock qmgr and for
// cqmgr, and their ratio, as a Markdown table.
#pragma once

#include "run.hpp"
#include "workload.hpp"

#include <ostream>
#include <vector>

namespace bench {

// One line per finished run, printed while the session goes on.
void print_run_line(std::ostream& out, const Workload& w, int pair, const RunResult& r);

// "### name" with the description, then the table over the successful runs.
void print_table(std::ostream& out, const Workload& w, const std::vector<RunResult>& runs);

} // namespace bench
