// qmgr-bench (run it as tools/bench): stock qmgr(8) and cqmgr side by side on
// its workloads (docs/performance.md), alternated in one session, with a table of
// medians and ratios per workload.
#include "clock.hpp"
#include "cluster.hpp"
#include "control_cost.hpp"
#include "dead_restart.hpp"
#include "error.hpp"
#include "fsutil.hpp"
#include "netns.hpp"
#include "options.hpp"
#include "process.hpp"
#include "regex_cost.hpp"
#include "run.hpp"
#include "signals.hpp"
#include "soak.hpp"
#include "summary.hpp"
#include "workload.hpp"
#include "workloads.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace bench;

namespace {

// A program of the build tree (e.g. "qmgr/cqmgr"), found from
// build/tools/qmgr-bench/qmgr-bench.
std::string in_build_tree(const std::string& relative) {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw compat::sys_error("readlink /proc/self/exe");
    std::string exe(buf, static_cast<size_t>(n));
    std::string dir = exe.substr(0, exe.rfind('/'));
    return dir + "/../../" + relative;
}

// An absolute path: the instances link it from their own directories.
std::string absolute(const std::string& path) {
    char buf[PATH_MAX];
    if (realpath(path.c_str(), buf) == nullptr)
        throw compat::Error("expected a cqmgr binary at " + path + ", found none");
    return buf;
}

// The whole session; returns the exit status.
int run_session(const Options& o) {
    if (o.regex_cost) return run_regex_cost();
    Session session;
    session.scale = o.scale;
    session.recovery_rate = o.recovery_rate;
    session.verbose = o.verbose;
    if (!o.shared_network) {
        std::string err = enter_private_network();
        session.private_network = err.empty();
        if (!err.empty())
            std::cerr << "qmgr-bench: warning: no private network namespace (" << err
                      << "); fanout's destinations will share one nexthop\n";
    }
    RunOptions ro;
    ro.cqmgr_path = absolute(o.cqmgr_path.empty() ? in_build_tree("qmgr/cqmgr") : o.cqmgr_path);
    ro.keep_failed = o.keep_failed;
    ro.keep = o.keep;
    ro.verbose = o.verbose;
    ro.side = o.side;
    ro.cqmgr_main_cf = o.cqmgr_main_cf;
    ro.scrape_every = o.scrape_every;
    bool soak = std::find(o.workloads.begin(), o.workloads.end(), "soak") != o.workloads.end();
    if (soak && o.workloads.size() != 1)
        throw compat::Error("--workload soak: expected it alone, found " +
                            std::to_string(o.workloads.size()) + " workloads");
    if (soak || o.poll || o.control_cost)
        ro.cqmgrctl_path =
            absolute(o.cqmgrctl_path.empty() ? in_build_tree("ctl/cqmgrctl") : o.cqmgrctl_path);
    if (soak)
        return run_soak(ro, {o.soak_duration, o.soak_rate, o.soak_out, session.private_network});
    if (o.control_cost) return run_control_cost(session, ro);
    if (o.dead_restart) return run_dead_restart(session, ro, o.pairs);
    if (o.cluster) return run_cluster(session, ro, o.pairs, o.cluster_rate);
    ro.attach = o.attach;
    if (!o.attach.empty()) std::filesystem::create_directories(o.attach_dir);

    auto names = o.workloads.empty() ? workload_names(false) : o.workloads;
    std::vector<std::unique_ptr<Workload>> workloads;
    for (const auto& n : names)
        workloads.push_back(make_workload(n, session));
    // Before any thread starts: a mount namespace is per process.
    std::unique_ptr<compat::WorkDir> resolver_dir;
    if (std::any_of(workloads.begin(), workloads.end(),
                    [](const auto& w) { return w->follows_mx(); })) {
        resolver_dir = std::make_unique<compat::WorkDir>("/tmp/cqmgr-bench-resolv-");
        resolver_dir->remove_on_exit(true);
        std::string conf = resolver_dir->path() + "/resolv.conf";
        compat::write_file(conf, "nameserver 127.0.0.1\noptions timeout:2 attempts:2\n");
        std::string err = session.private_network
                              ? use_private_resolver(conf)
                              : "no private network namespace (--shared-network or it failed)";
        if (!err.empty())
            std::cerr << "qmgr-bench: warning: no private resolver (" << err
                      << "); the workloads that follow MX records will fail\n";
    }

    // Each pair runs side a, then side b.
    const std::string side_a = o.poll ? "cqmgr" : "stock";
    const std::string side_b = o.poll ? "polled" : "cqmgr";
    std::cout << "qmgr-bench: " << o.pairs << " pair(s) per workload ("
              << (o.side.empty() ? side_a + ", " + side_b : o.side + " alone") << "), scale "
              << o.scale << ", cqmgr " << ro.cqmgr_path << "\n";
    for (const auto& [k, v] : ro.cqmgr_main_cf)
        std::cout << "  every cqmgr run: " << k << " = " << v << "\n";
    double t0 = boot_seconds();
    std::ostringstream tables;
    std::map<std::string, std::vector<RunResult>> by_name; // for tables over workloads
    int failed = 0;
    for (auto& w : workloads) {
        std::cout << "\n" << w->name() << ": " << w->describe() << "\n" << std::flush;
        double tp = boot_seconds();
        try {
            w->prepare();
        } catch (const compat::Interrupted&) {
            throw;
        } catch (const compat::Error& e) {
            std::cout << "  FAILED to prepare: " << e.what() << "\n";
            ++failed;
            continue;
        }
        if (boot_seconds() - tp > 1)
            std::cout << "  prepared in " << static_cast<int>(boot_seconds() - tp) << " s\n";
        std::vector<RunResult> runs;
        for (int p = 1; p <= o.pairs; ++p)
            for (const auto& side : {side_a, side_b}) {
                if (!o.side.empty() && side != o.side) continue;
                auto kind = side == "stock" ? compat::QmgrKind::Stock : compat::QmgrKind::Cqmgr;
                ro.polled = side == "polled";
                ro.attach_out =
                    o.attach_dir + "/" + w->name() + "-" + std::to_string(p) + "-" + side;
                runs.push_back(run_workload(*w, kind, ro));
                print_run_line(std::cout, *w, p, runs.back());
                if (!runs.back().error.empty()) ++failed;
            }
        print_table(std::cout, *w, runs, side_a, side_b);
        print_table(tables, *w, runs, side_a, side_b);
        by_name[w->name()] = std::move(runs);
        w.reset(); // removes its queue template
    }
    print_tarpit_targets(tables, by_name);
    std::cout << "\n## Summary (" << static_cast<int>(boot_seconds() - t0) << " s in all"
              << (failed ? ", " + std::to_string(failed) + " failed run(s)" : "") << ")\n"
              << tables.str();
    return failed ? 1 : 0;
}

} // namespace

// Checks for root, installs the signal handlers, runs the session.
int main(int argc, char** argv) {
    try {
        Options o = parse_options(argc, argv);
        if (o.help) {
            print_usage(std::cout);
            return 0;
        }
        if (geteuid() != 0)
            throw compat::Error("expected to run as root (private Postfix instances), found uid " +
                                std::to_string(geteuid()));
        compat::install_signal_handlers();
        compat::become_child_subreaper();
        return run_session(o);
    } catch (const compat::Interrupted&) {
        std::cerr << "qmgr-bench: interrupted\n";
        return 128 + compat::received_signal();
    } catch (const compat::Error& e) {
        std::cerr << "qmgr-bench: " << e.what() << "\n";
        return 2;
    }
}
