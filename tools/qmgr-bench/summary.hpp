// The per-workload table: medians of each figure for two sides (stock qmgr
// and cqmgr, or cqmgr unpolled and polled), and their ratio, as a Markdown
// table.
#pragma once

#include "run.hpp"
#include "workload.hpp"

#include <ostream>
#include <vector>

namespace bench {

// One line per finished run, printed while the session goes on.
void print_run_line(std::ostream& out, const Workload& w, int pair, const RunResult& r);

// "### name" with the description, then the table over the successful runs
// of sides `a` and `b` (RunResult::side), with the ratio b/a.
void print_table(std::ostream& out, const Workload& w, const std::vector<RunResult>& runs,
                 const std::string& a, const std::string& b);

} // namespace bench
