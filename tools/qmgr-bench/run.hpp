// One measured run of a workload against one queue manager, in a fresh
// private Postfix instance.
#pragma once

#include "instance.hpp"
#include "metrics.hpp"
#include "workload.hpp"

#include <string>

namespace bench {

struct RunOptions {
    std::string cqmgr_path;
    bool keep_failed = false; // keep the instance directory of a failed run
    bool keep = false;        // keep it always
    bool verbose = false;
    std::string attach;     // command to attach to the queue manager ("" for none)
    std::string attach_out; // its {out}
    // The "polled" side of --poll: cqmgr with its metrics endpoint on, watched
    // by cqmgrctl top and a scraper at 10 Hz (see poller.hpp), or with
    // `scrape_every` (seconds) by a scraper alone at that interval.
    bool polled = false;
    double scrape_every = 0;
    std::string cqmgrctl_path;
    // --dead-restart, --cluster: "stock" or "cqmgr" runs alone; empty: both.
    std::string side;
    // Settings appended to every cqmgr run's main.cf (--cqmgr-set).
    std::vector<std::pair<std::string, std::string>> cqmgr_main_cf;
};

struct RunResult {
    compat::QmgrKind kind = compat::QmgrKind::Stock;
    std::string side;  // the table column: "stock", "cqmgr" or "polled"
    Metrics metrics;   // empty if the run failed
    std::string error; // why it failed, "" on success
};

// Sets up sinks and instance, fills the queue, starts master, follows the
// maillog and the queue manager until every recipient is delivered and the
// queue is empty, and tears everything down. Failures come back in `error`;
// only compat::Interrupted is thrown.
RunResult run_workload(const Workload& w, compat::QmgrKind kind, const RunOptions& opts);

} // namespace bench
