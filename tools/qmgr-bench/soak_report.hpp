// The soak's report: per side, what became of every recipient, fatal
// lines, the queue manager's resident set and descriptors and the state
// store over time, then a verdict on each acceptance point for cqmgr, and
// gnuplot plots of the samples.
#pragma once

#include "soak_ledger.hpp"
#include "soak_sampler.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct SoakSideResult {
    std::string name; // stock, cqmgr
    SoakTally tally;
    std::uint64_t fatal_count = 0;
    std::vector<std::string> fatal_lines;
    std::vector<std::pair<std::string, std::uint64_t>> warnings; // qmgr and master
    SoakWindow early, late;                                      // the windows the verdict compares
    SoakWindow end;                 // the drain's last minute (the store when all is done)
    std::size_t qmgr_processes = 0; // distinct queue-manager pids seen
    std::uint64_t corrupt = 0;      // files in corrupt/ at the end
    std::uint64_t queued = 0;       // other message files left at the end
    std::uint64_t sent_lines = 0, deferred_lines = 0;
    std::string samples_tsv;
};

struct SoakResult {
    double duration = 0; // injection, seconds
    double rate = 0;     // messages per second per side
    double early_from = 0, early_to = 0, late_from = 0, late_to = 0;
    bool drained = false;
    double drain_seconds = 0;
    int events = 0, events_failed = 0;
    int scrapes = 0, scrapes_failed = 0;
    double control_settings_left = -1; // suspensions and throttles at the end; -1 unknown
    int planned_restarts = 0;          // kills and reloads in the schedule
    std::vector<SoakSideResult> sides;
};

// Prints figures and verdict to `out`, writes OUT_DIR/verdict.md and the
// plots (when gnuplot is there); true if cqmgr passes every point.
bool report_soak(const SoakResult& r, const std::string& out_dir, std::ostream& out);

} // namespace bench
