#include "options.hpp"

#include "error.hpp"
#include "workload.hpp"

#include <algorithm>
#include <cstdlib>

namespace bench {
namespace {

// A number from an option value; throws naming the option if it is not one.
double number(const std::string& opt, const std::string& v) {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0')
        throw compat::Error(opt + ": expected a number, found '" + v + "'");
    return d;
}

// A whole number >= 1 from an option value; throws naming the option if it
// is not one.
int count(const std::string& opt, const std::string& v) {
    double d = number(opt, v);
    if (d < 1 || d != static_cast<int>(d))
        throw compat::Error(opt + ": expected a whole number >= 1, found " + std::to_string(d));
    return static_cast<int>(d);
}

} // namespace

// Accepts "--opt VALUE" and "--opt=VALUE".
Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        std::string value;
        bool inline_value = false;
        if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
            inline_value = true;
        }
        auto next = [&]() -> std::string {
            if (inline_value) return value;
            if (i + 1 >= argc)
                throw compat::Error("expected a value after " + a +
                                    ", found the end of the arguments");
            return argv[++i];
        };
        if (a == "--pairs") {
            o.pairs = count(a, next());
        } else if (a == "--workload") {
            std::string list = next();
            size_t pos = 0;
            while (pos <= list.size()) {
                size_t comma = list.find(',', pos);
                if (comma == std::string::npos) comma = list.size();
                o.workloads.push_back(list.substr(pos, comma - pos));
                pos = comma + 1;
            }
        } else if (a == "--scale") {
            std::string v = next();
            o.scale = number(a, v);
            if (!(o.scale > 0)) throw compat::Error("--scale: expected a number > 0, found " + v);
        } else if (a == "--recovery-rate") {
            o.recovery_rate = count(a, next());
        } else if (a == "--cqmgr") {
            o.cqmgr_path = next();
        } else if (a == "--attach") {
            o.attach = next();
        } else if (a == "--attach-dir") {
            o.attach_dir = next();
        } else if (a == "--poll") {
            o.poll = true;
        } else if (a == "--control-cost") {
            o.control_cost = true;
        } else if (a == "--dead-restart") {
            o.dead_restart = true;
        } else if (a == "--cluster") {
            o.cluster = true;
        } else if (a == "--cluster-rate") {
            o.cluster_rate = count(a, next());
        } else if (a == "--side") {
            o.side = next();
            if (o.side != "stock" && o.side != "cqmgr")
                throw compat::Error("--side: expected stock or cqmgr, found '" + o.side + "'");
        } else if (a == "--cqmgrctl") {
            o.cqmgrctl_path = next();
        } else if (a == "--keep") {
            o.keep = true;
        } else if (a == "--keep-failed") {
            o.keep_failed = true;
        } else if (a == "--shared-network") {
            o.shared_network = true;
        } else if (a == "--verbose" || a == "-v") {
            o.verbose = true;
        } else if (a == "--help" || a == "-h") {
            o.help = true;
        } else {
            throw compat::Error("expected an option (see --help), found '" + std::string(argv[i]) +
                                "'");
        }
    }
    return o;
}

// Options and workloads.
void print_usage(std::ostream& out) {
    out << "usage: tools/bench [--pairs N] [--workload NAME[,NAME...]]... [--scale F]\n"
           "                   [--cqmgr PATH] [--keep] [--keep-failed] [--shared-network] "
           "[--verbose]\n"
           "                   [--attach 'CMD {pid} {out}'] [--attach-dir DIR]\n"
           "                   [--poll] [--control-cost] [--dead-restart] [--cluster]\n"
           "                   [--cluster-rate N] [--side stock|cqmgr] [--cqmgrctl PATH]\n"
           "                   [--recovery-rate N]\n"
           "Runs each workload with stock qmgr and with cqmgr alternately (stock, cqmgr, stock,\n"
           "cqmgr, ...) in private Postfix instances and prints the medians and ratios.\n"
           "  --pairs N         stock/cqmgr pairs per workload (default 3)\n"
           "  --workload NAME   run only these (repeatable); default: all of\n"
           "                    ";
    std::string sep;
    for (const auto& n : workload_names(false)) {
        out << sep << n;
        sep = ", ";
    }
    out << "\n"
           "                    (also: ";
    sep.clear();
    auto all = workload_names(true), def = workload_names(false);
    for (const auto& n : all)
        if (std::find(def.begin(), def.end(), n) == def.end()) {
            out << sep << n;
            sep = ", ";
        }
    out << ", only when named)\n"
           "  --scale F         multiply the workload sizes by F (default 1 = the issue's sizes;\n"
           "                    0.1 for a quick run)\n"
           "  --cqmgr PATH      the cqmgr binary (default: build/qmgr/cqmgr)\n"
           "  --keep            keep every run's instance directory (maillog, sink logs)\n"
           "  --keep-failed     keep the instance directory of a failed run\n"
           "  --shared-network  stay in this network namespace (fanout then has one nexthop)\n"
           "  --verbose         progress and instance details\n"
           "  --attach CMD      attach CMD to each run's queue manager, which waits for it 1 s:\n"
           "                    {pid} is its pid, {out} DIR/WORKLOAD-PAIR-KIND; SIGINT ends it\n"
           "                    (e.g. 'strace -c -f -o {out} -p {pid}',\n"
           "                    'perf record -g -o {out} -p {pid}')\n"
           "  --attach-dir DIR  where {out} files go (default /tmp/qmgr-bench-attach)\n"
           "  --poll            compare cqmgr unpolled with cqmgr polled at 10 Hz by\n"
           "                    `cqmgrctl top` and a /metrics scraper, instead of stock\n"
           "                    with cqmgr\n"
           "  --control-cost    instead of workloads: 20,000 active messages (times --scale)\n"
           "                    over 1,000 destinations held by a suspension, and the\n"
           "                    daemon's CPU time per summary, queues and jobs reply and\n"
           "                    per metrics scrape\n"
           "  --dead-restart    instead of workloads: connection attempts to a dead\n"
           "                    destination after postfix reload and after kill -9 of the\n"
           "                    queue manager, stock against cqmgr, --pairs times\n"
           "  --cluster         instead of workloads: two senders and a receiver allowing 5\n"
           "                    connections and 50 messages/s from both, stock against\n"
           "                    cqmgr sharing the limits through redis-server\n"
           "  --cluster-rate N  with --cluster: cqmgr's shared rate (default 50/s; the\n"
           "                    receiver allows 2N+10 per anvil window); e.g. 2000 to see\n"
           "                    the 5 connections alone limit the senders\n"
           "  --side SIDE       with --dead-restart or --cluster: run only stock or only\n"
           "                    cqmgr, --pairs times (to look into one side; no comparison)\n"
           "  --cqmgrctl PATH   the cqmgrctl binary (default: build/ctl/cqmgrctl)\n"
           "  --recovery-rate N outage-recovery: cqmgr's cqmgr_recovery_rate (default 120)\n";
}

} // namespace bench
