// The command line of qmgr-bench (tools/bench).
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct Options {
    int pairs = 3;
    std::vector<std::string> workloads; // empty: all, in the default order
    double scale = 1;
    int recovery_rate = 120;     // outage-recovery: cqmgr_recovery_rate
    std::string cqmgr_path;      // empty: ../../qmgr/cqmgr next to this program
    bool keep_failed = false;    // keep the instance directory of a failed run
    bool keep = false;           // keep every run's instance directory
    bool shared_network = false; // do not enter a private network namespace
    std::string attach;          // tool to attach to each run's queue manager ({pid}, {out})
    std::string attach_dir = "/tmp/qmgr-bench-attach"; // where {out} files go
    bool poll = false;         // cqmgr unpolled against cqmgr polled, instead of stock
    double scrape_every = 0;   // --poll: only a scrape every so many seconds (0: top and 10 Hz)
    bool control_cost = false; // the control-cost measurement instead of workloads
    bool regex_cost = false;   // the regex-cost measurement instead of workloads
    bool dead_restart = false; // the dead-restart measurement instead of workloads
    bool cluster = false;      // the cluster measurement instead of workloads
    int cluster_rate = 50;     // --cluster: cqmgr's shared rate, messages per second
    std::string side;          // --dead-restart, --cluster: "stock" or "cqmgr" alone; empty: both
    std::string cqmgrctl_path; // empty: ../../ctl/cqmgrctl next to this program
    std::vector<std::pair<std::string, std::string>> cqmgr_main_cf; // --cqmgr-set
    double soak_duration = 1800;                   // --workload soak: injection, seconds
    double soak_rate = 5;                          // its messages per second
    std::string soak_out = "/tmp/qmgr-bench-soak"; // its figures, plots and verdict
    bool verbose = false;
    bool help = false;
};

// Parses argv; throws compat::Error naming the offending argument.
Options parse_options(int argc, char** argv);

// The usage text.
void print_usage(std::ostream& out);

} // namespace bench
