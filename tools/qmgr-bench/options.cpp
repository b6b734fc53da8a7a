#include "options.hpp"

#include "error.hpp"
#include "instance.hpp"
#include "workload.hpp"

#include <CLI/CLI.hpp>
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

// Seconds from a Postfix-style time: a number with an optional unit s, m,
// h or d (seconds without one); throws naming the option otherwise.
double duration(const std::string& opt, const std::string& v) {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    std::string unit = end ? end : "";
    double mult = unit.empty() || unit == "s" ? 1
                  : unit == "m"               ? 60
                  : unit == "h"               ? 3600
                  : unit == "d"               ? 86400
                                              : -1;
    if (v.empty() || end == v.c_str() || mult < 0 || !(d > 0))
        throw compat::Error(opt + ": expected a time > 0 such as 90s, 30m or 1h, found '" + v +
                            "'");
    return d * mult;
}

} // namespace

// Parses with CLI11, the option library of every tool here: "--opt VALUE"
// and "--opt=VALUE". The numbers keep their own checks (count(), number()),
// whose messages name the option.
Options parse_options(int argc, char** argv) {
    Options o;
    CLI::App app{"qmgr-bench"};
    app.set_help_flag(); // ours: print_usage()
    std::string pairs, scale, recovery_rate, cluster_rate, soak_duration, soak_rate, scrape_every;
    std::vector<std::string> workloads, cqmgr_set;
    app.add_option("--pairs", pairs);
    app.add_option("--workload", workloads)->delimiter(',');
    app.add_option("--scale", scale);
    app.add_option("--recovery-rate", recovery_rate);
    app.add_option("--cqmgr", o.cqmgr_path);
    app.add_option("--attach", o.attach);
    app.add_option("--attach-dir", o.attach_dir);
    app.add_flag("--poll", o.poll);
    app.add_option("--scrape-every", scrape_every);
    app.add_flag("--control-cost", o.control_cost);
    app.add_flag("--regex-cost", o.regex_cost);
    app.add_flag("--dead-restart", o.dead_restart);
    app.add_flag("--cluster", o.cluster);
    app.add_option("--cluster-rate", cluster_rate);
    app.add_option("--side", o.side)->check(CLI::IsMember({"stock", "cqmgr"}));
    app.add_option("--cqmgrctl", o.cqmgrctl_path);
    app.add_option("--cqmgr-set", cqmgr_set)->allow_extra_args(false);
    app.add_option("--duration", soak_duration);
    app.add_option("--rate", soak_rate);
    app.add_option("--out", o.soak_out);
    app.add_flag("--keep", o.keep);
    app.add_flag("--keep-failed", o.keep_failed);
    app.add_flag("--shared-network", o.shared_network);
    app.add_flag("-v,--verbose", o.verbose);
    app.add_flag("-h,--help", o.help);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        throw compat::Error(std::string(e.what()) + " (see --help)");
    }
    o.workloads = workloads;
    for (const auto& kv : cqmgr_set)
        o.cqmgr_main_cf.push_back(compat::parse_setting("--cqmgr-set", kv));
    if (!pairs.empty()) o.pairs = count("--pairs", pairs);
    if (!recovery_rate.empty()) o.recovery_rate = count("--recovery-rate", recovery_rate);
    if (!cluster_rate.empty()) o.cluster_rate = count("--cluster-rate", cluster_rate);
    if (!soak_duration.empty()) o.soak_duration = duration("--duration", soak_duration);
    if (!soak_rate.empty()) {
        o.soak_rate = number("--rate", soak_rate);
        if (!(o.soak_rate > 0))
            throw compat::Error("--rate: expected a number > 0, found " + soak_rate);
    }
    if (!scrape_every.empty()) {
        o.scrape_every = number("--scrape-every", scrape_every);
        if (!(o.scrape_every > 0) || !o.poll)
            throw compat::Error("--scrape-every: expected a number > 0 with --poll, found " +
                                scrape_every + (o.poll ? "" : " without --poll"));
    }
    if (!scale.empty()) {
        o.scale = number("--scale", scale);
        if (!(o.scale > 0)) throw compat::Error("--scale: expected a number > 0, found " + scale);
    }
    return o;
}

// Options and workloads.
void print_usage(std::ostream& out) {
    out << "usage: tools/bench [--pairs N] [--workload NAME[,NAME...]]... [--scale F]\n"
           "                   [--cqmgr PATH] [--keep] [--keep-failed] [--shared-network] "
           "[--verbose]\n"
           "                   [--attach 'CMD {pid} {out}'] [--attach-dir DIR]\n"
           "                   [--poll [--scrape-every S]] [--control-cost] [--regex-cost] "
           "[--dead-restart] "
           "[--cluster]\n"
           "                   [--cluster-rate N] [--side stock|cqmgr] [--cqmgrctl PATH]\n"
           "                   [--recovery-rate N] [--cqmgr-set NAME=VALUE]...\n"
           "                   [--duration TIME] [--rate N] [--out DIR]\n"
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
    out << ", soak, only when named)\n"
           "  --scale F         multiply the workload sizes by F (default 1 = the issue's sizes;\n"
           "                    0.1 for a quick run)\n"
           "  --cqmgr PATH      the cqmgr binary (default: build/qmgr/cqmgr)\n"
           "  --keep            keep every run's instance directory (maillog, sink logs)\n"
           "  --keep-failed     keep the instance directory of a failed run\n"
           "  --shared-network  stay in this network namespace (fanout then has one nexthop;\n"
           "                    provider, reply-rule and tenant, which follow MX records\n"
           "                    from a DNS server of their own, cannot run)\n"
           "  --verbose         progress and instance details\n"
           "  --attach CMD      attach CMD to each run's queue manager, which waits for it 1 s:\n"
           "                    {pid} is its pid, {out} DIR/WORKLOAD-PAIR-KIND; SIGINT ends it\n"
           "                    (e.g. 'strace -c -f -o {out} -p {pid}',\n"
           "                    'perf record -g -o {out} -p {pid}')\n"
           "  --attach-dir DIR  where {out} files go (default /tmp/qmgr-bench-attach)\n"
           "  --poll            compare cqmgr unpolled with cqmgr polled at 10 Hz by\n"
           "                    `cqmgrctl top` and a /metrics scraper, instead of stock\n"
           "                    with cqmgr\n"
           "  --scrape-every S  with --poll: the polled side only scrapes /metrics, every\n"
           "                    S seconds (as Prometheus would; no cqmgrctl top)\n"
           "  --control-cost    instead of workloads: 20,000 active messages (times --scale)\n"
           "                    over 1,000 destinations held by a suspension, and the\n"
           "                    daemon's CPU time per summary, queues and jobs reply and\n"
           "                    per metrics scrape\n"
           "  --regex-cost      instead of workloads: what one lookup of the reply rules,\n"
           "                    the priority header maps and regexp: tables costs on text\n"
           "                    made to defeat a backtracking pattern (in this process)\n"
           "  --dead-restart    instead of workloads: connection attempts to a dead\n"
           "                    destination after postfix reload and after kill -9 of the\n"
           "                    queue manager, stock against cqmgr, --pairs times\n"
           "  --cluster         instead of workloads: two senders and a receiver allowing 5\n"
           "                    connections and 50 messages/s from both, stock against\n"
           "                    cqmgr sharing the limits through redis-server\n"
           "  --cluster-rate N  with --cluster: cqmgr's shared rate (default 50/s; the\n"
           "                    receiver allows 2N+10 per anvil window); e.g. 2000 to see\n"
           "                    the 5 connections alone limit the senders\n"
           "  --side SIDE       run only stock or only cqmgr, --pairs times (to look into\n"
           "                    one side, e.g. stock's figures alone; no comparison)\n"
           "  --cqmgrctl PATH   the cqmgrctl binary (default: build/ctl/cqmgrctl)\n"
           "  --recovery-rate N outage-recovery: cqmgr's cqmgr_recovery_rate (default 120)\n"
           "  --cqmgr-set NAME=VALUE  a main.cf setting for every cqmgr run, after the\n"
           "                    workload's (repeatable), e.g. cqmgr_deferred_due_index=yes\n"
           "  --workload soak   alone: stock and cqmgr (every cqmgr_ feature on) at once on\n"
           "                    the same mixed traffic to fast, slow, tarpitting, flapping,\n"
           "                    4xx-at-random, connection-limited, bouncing, dead and\n"
           "                    ever-new destinations, with kills, reloads, postsuper -r, Redis\n"
           "                    restarts and cqmgrctl commands; then a drain and a verdict\n"
           "                    (lost, left, duplicates, fatal lines, RSS, descriptors,\n"
           "                    state store)\n"
           "  --duration TIME   soak: how long mail is injected (default 30m; 3m for a\n"
           "                    quick run; units s, m, h)\n"
           "  --rate N          soak: messages per second into each side (default 5)\n"
           "  --out DIR         soak: where samples, plots and the verdict go (default\n"
           "                    /tmp/qmgr-bench-soak)\n";
}

} // namespace bench
