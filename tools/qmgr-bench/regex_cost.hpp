// `tools/bench --regex-cost`: what one lookup costs when remote or
// sender-controlled text is made to defeat a backtracking pattern (issue
// #26, bounded matching): the default reply rules, an admin's reply rules,
// a message's header lines against cqmgr_priority_header_maps, and regexp:
// tables, each on crafted subjects, timed in this process on the daemon's
// own code (qmgr/src/features/: adaptive/reply_class.*,
// tables/regex_table.*, shares/priority_class.*).
#pragma once

namespace bench {

// Runs the measurement and prints its table; returns the exit status.
int run_regex_cost();

} // namespace bench
