// The loop of the measurements that are not workloads (--dead-restart,
// --cluster): stock and cqmgr alternately, each run in a fresh temporary
// directory, a line per run, and a Markdown table of medians per side.
#pragma once

#include "error.hpp"
#include "fsutil.hpp"
#include "instance.hpp"
#include "metrics.hpp"
#include "run.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

// Each side's successful runs, by "stock" and "cqmgr".
template <class R> using SideRuns = std::map<std::string, std::vector<R>>;

// Runs `measure(kind, dir)` for stock then cqmgr, `pairs` times, and prints
// "  pair P SIDE: " + describe(result) or the failure; `failed` counts those.
// With opts.side set, that side alone.
template <class R, class Measure, class Describe>
SideRuns<R> run_side_by_side(int pairs, const RunOptions& opts, Measure measure, Describe describe,
                             int& failed) {
    SideRuns<R> runs;
    for (int p = 1; p <= pairs; ++p)
        for (auto kind : {compat::QmgrKind::Stock, compat::QmgrKind::Cqmgr}) {
            std::string side = compat::qmgr_kind_name(kind);
            if (!opts.side.empty() && side != opts.side) continue;
            compat::WorkDir dir("/tmp/cqmgr-bench-");
            dir.remove_on_exit(!opts.keep);
            std::cout << "  pair " << p << " " << side << ": " << std::flush;
            try {
                R r = measure(kind, dir.path());
                runs[side].push_back(r);
                std::cout << describe(r) << "\n" << std::flush;
            } catch (const compat::Interrupted&) {
                throw;
            } catch (const compat::Error& e) {
                ++failed;
                if (opts.keep_failed) dir.remove_on_exit(false);
                std::cout << "FAILED: " << e.what() << "\n" << std::flush;
            }
        }
    return runs;
}

// A table of medians, one row per figure: "| label | stock | cqmgr |".
template <class R> class SideTable {
  public:
    SideTable(const SideRuns<R>& runs, std::string stock_heading, std::string cqmgr_heading)
        : runs_(runs) {
        out_ << "| figure | " << stock_heading << " | " << cqmgr_heading << " |\n|---|---|---|\n";
    }
    // A row: the medians of field(run) on each side, with `decimals` places.
    template <class F> void row(const std::string& label, F field, int decimals) {
        out_ << "| " << label << " | " << median_of("stock", field, decimals) << " | "
             << median_of("cqmgr", field, decimals) << " |\n";
    }
    std::string str() const { return out_.str(); }

  private:
    template <class F> std::string median_of(const std::string& side, F field, int decimals) {
        std::vector<double> v;
        if (auto it = runs_.find(side); it != runs_.end())
            for (const auto& r : it->second)
                v.push_back(static_cast<double>(field(r)));
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", decimals, median(v));
        return buf;
    }

    const SideRuns<R>& runs_;
    std::ostringstream out_;
};

} // namespace bench
