// compat-run: runs a scenario against stock qmgr(8), cqmgr, or both, checks
// the expectations, compares the two outcomes, and prints a summary.
#include "error.hpp"
#include "instance.hpp"
#include "maillog.hpp"
#include "outcome.hpp"
#include "process.hpp"
#include "queue_fs.hpp"
#include "runner.hpp"
#include "scenario.hpp"
#include "signals.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace compat;

namespace {

// Exit status for a scenario this machine cannot run (ctest SKIP_RETURN_CODE).
constexpr int kSkipStatus = 77;

struct Cli {
    std::string mode = "both";
    std::string cqmgr;
    bool keep = false;        // keep the instance directories, always
    bool keep_failed = false; // keep them when the scenario fails or is interrupted
    bool verbose = false;
    bool sanitized = false;             // cqmgr is an ASan/UBSan build
    std::vector<std::string> cqmgr_set; // NAME=VALUE for cqmgr's main.cf
    std::string scenario;
};

// Prints the usage text.
void usage(std::ostream& out) {
    out << "usage: compat-run [--qmgr stock|cqmgr|both|stock-twice] [--cqmgr PATH] [--keep] "
           "[--keep-failed] "
           "[--verbose] [--sanitized] [--cqmgr-set NAME=VALUE]... "
           "SCENARIO.toml\n"
           "  --qmgr MODE   run with stock qmgr, with cqmgr, or both and compare (default: both);\n"
           "                stock-twice runs stock twice and compares (is the scenario "
           "deterministic?)\n"
           "  --cqmgr PATH  the cqmgr binary (default: ../qmgr/cqmgr next to compat-run)\n"
           "  --keep        keep the instance directories (default: always removed)\n"
           "  --keep-failed keep them only when the scenario fails or is interrupted\n"
           "  --verbose     show commands, progress, and all normalized qmgr/recipient lines\n"
           "  --sanitized   cqmgr is built with ASan/UBSan: run it through a wrapper that\n"
           "                keeps its reports, and fail the run on any of them\n"
           "  --cqmgr-set NAME=VALUE  add a main.cf setting to cqmgr's runs only, after the\n"
           "                scenario's (repeatable): an opt-in feature against stock\n";
}

// Parses argv (with CLI11, as every tool here); throws Error with the
// offending argument. --help prints usage() and exits.
Cli parse_cli(int argc, char** argv) {
    Cli c;
    CLI::App app{"compat-run"};
    app.set_help_flag(); // ours: usage()
    bool help = false;
    app.add_option("--qmgr", c.mode)
        ->check(CLI::IsMember({"stock", "cqmgr", "both", "stock-twice"}));
    app.add_option("--cqmgr", c.cqmgr);
    app.add_flag("--keep", c.keep);
    app.add_flag("--keep-failed", c.keep_failed);
    app.add_flag("-v,--verbose", c.verbose);
    app.add_flag("--sanitized", c.sanitized);
    app.add_option("--cqmgr-set", c.cqmgr_set)->allow_extra_args(false);
    app.add_flag("-h,--help", help);
    app.add_option("scenario", c.scenario);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        throw Error(e.what());
    }
    if (help) {
        usage(std::cout);
        std::exit(0);
    }
    if (c.scenario.empty()) throw Error("expected a scenario file argument, found none");
    for (const auto& kv : c.cqmgr_set)
        parse_setting("--cqmgr-set", kv); // checked before anything runs
    return c;
}

// Absolute path of the cqmgr binary: --cqmgr, or ../qmgr/cqmgr relative to this program.
std::string resolve_cqmgr(const std::string& given, bool required) {
    std::error_code ec;
    fs::path p = given;
    if (p.empty()) {
        fs::path self = fs::read_symlink("/proc/self/exe", ec);
        if (ec) throw Error("cannot locate compat-run itself: " + ec.message());
        p = self.parent_path().parent_path() / "qmgr" / "cqmgr";
        if (!fs::exists(p, ec)) {
            if (required)
                throw Error("expected cqmgr at " + p.string() + " (or a --cqmgr PATH), found none");
            return "";
        }
    }
    fs::path abs = fs::canonical(p, ec);
    if (ec) {
        if (required)
            throw Error("--cqmgr: expected an existing file at " + p.string() + ", found " +
                        ec.message());
        return "";
    }
    return abs.string();
}

// Absolute path of compat-fake-agent next to this program, or "" if it was
// not built.
std::string find_fake_agent() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec).parent_path() / "compat-fake-agent";
    return !ec && fs::exists(p, ec) ? p.string() : "";
}

// The control client of the same build: ctl/cqmgrctl beside compat-tests/.
std::string find_cqmgrctl() {
    std::error_code ec;
    fs::path p =
        fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path() / "ctl" / "cqmgrctl";
    return !ec && fs::exists(p, ec) ? p.string() : "";
}

// Shortens a message to one line for the final verdict.
std::string first_line(const std::string& s) {
    size_t nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl) + " ...";
}

} // namespace

// Runs the requested variants, prints the summary and the verdict.
int main(int argc, char** argv) {
    Cli cli;
    Scenario sc;
    try {
        install_signal_handlers();
        become_child_subreaper();
        cli = parse_cli(argc, argv);
    } catch (const Error& e) {
        std::cerr << "compat-run: " << e.what() << "\n";
        usage(std::cerr);
        return 2;
    }
    try {
        if (geteuid() != 0)
            throw Error(
                "expected to run as root (master(8), postdrop and local(8) need it), found uid " +
                std::to_string(geteuid()));
        sc = load_scenario(cli.scenario);
    } catch (const Error& e) {
        std::cerr << "compat-run: " << e.what() << "\n";
        return 2;
    }

    std::vector<QmgrKind> kinds;
    if (cli.mode != "cqmgr") kinds.push_back(QmgrKind::Stock);
    if (cli.mode == "stock-twice")
        kinds.push_back(QmgrKind::Stock);
    else if (cli.mode != "stock")
        kinds.push_back(QmgrKind::Cqmgr);
    if (sc.cqmgr_only && cli.mode == "both") kinds = {QmgrKind::Cqmgr};
    RunOptions opts;
    opts.verbose = cli.verbose;
    opts.keep_on_interrupt = cli.keep || cli.keep_failed;
    opts.sanitized = cli.sanitized;
    for (const auto& kv : cli.cqmgr_set)
        opts.cqmgr_main_cf.push_back(parse_setting("--cqmgr-set", kv));
    std::vector<std::string> reasons;
    try {
        opts.cqmgr_path =
            resolve_cqmgr(cli.cqmgr, cli.mode != "stock" && cli.mode != "stock-twice");
        opts.fake_agent_path = find_fake_agent();
        opts.cqmgrctl_path = find_cqmgrctl();
    } catch (const Error& e) {
        std::cerr << "compat-run: " << e.what() << "\n";
        std::cout << "compat " << sc.name << ": FAIL: " << e.what() << "\n";
        return 1;
    }

    if (sc.queue_fs.size_mib > 0) {
        if (auto why = loop_devices_missing()) {
            std::cout << "compat " << sc.name << ": SKIP: queue_fs needs loop devices: " << *why
                      << "\n";
            return kSkipStatus;
        }
    }

    std::cout << "compat " << sc.name << (sc.description.empty() ? "" : ": " + sc.description)
              << "\n"
              << "  scenario " << cli.scenario << ", timeout " << sc.timeout << " s per run\n";
    std::vector<RunResult> runs;
    try {
        for (size_t i = 0; i < kinds.size(); ++i) {
            std::cout << "--- run " << i + 1 << "/" << kinds.size() << ": "
                      << qmgr_kind_name(kinds[i]) << " qmgr";
            if (kinds[i] == QmgrKind::Cqmgr) std::cout << " (" << opts.cqmgr_path << ")";
            std::cout << " ---\n" << std::flush;
            runs.push_back(run_once(sc, kinds[i], opts));
            RunResult& r = runs.back();
            std::cout << "  instance " << r.dir->path() << "\n";
            print_outcome(std::cout, r.outcome, cli.verbose);
            if (r.failures.empty()) {
                std::cout << "  expectations: all met\n";
            } else {
                for (const auto& f : r.failures)
                    std::cout << "  FAIL: " << f << "\n";
                reasons.push_back(std::string(qmgr_kind_name(r.kind)) + ": " +
                                  first_line(r.failures.front()) +
                                  (r.failures.size() > 1
                                       ? " (+" + std::to_string(r.failures.size() - 1) + " more)"
                                       : ""));
            }
            std::cout << std::flush;
        }
        if (runs.size() == 2) {
            std::string second = cli.mode == "stock-twice" ? "stock#2" : "cqmgr";
            std::cout << "--- stock vs " << second << " ---\n";
            print_side_by_side(std::cout, runs[0].outcome, "stock", runs[1].outcome, second);
            CompareOptions co;
            co.qmgr_lines = sc.compare_qmgr_lines;
            co.qmgr_warnings = sc.compare_qmgr_warnings;
            co.backoff_tolerance = sc.backoff_tolerance;
            co.deferral_rate_tolerance = sc.deferral_rate_tolerance;
            auto diffs = compare_outcomes(runs[0].outcome, "stock", runs[1].outcome, second, co);
            if (diffs.empty()) {
                std::cout
                    << "  outcomes agree (recipients, notifications, queue, qmgr log lines)\n";
            } else {
                for (const auto& d : diffs)
                    std::cout << "  DIFF: " << d << "\n";
                reasons.push_back("stock and " + second + " outcomes differ (" +
                                  std::to_string(diffs.size()) +
                                  " difference lines, first: " + diffs.front() + ")");
            }
        }
    } catch (const Interrupted&) {
        std::cout << "compat " << sc.name << ": FAIL: interrupted by signal " << received_signal()
                  << "\n";
        for (auto& r : runs) {
            r.dir->remove_on_exit(!opts.keep_on_interrupt);
            if (opts.keep_on_interrupt)
                std::cout << "  instance dir kept: " << r.dir->path() << "\n";
        }
        return 128 + received_signal();
    }

    // Reports to show come last, after the comparison (tools/demo ends with
    // cqmgrctl summary).
    for (const auto& r : runs)
        for (const auto& [name, text] : r.outcome.shown_reports) {
            std::cout << "--- " << name << " (" << qmgr_kind_name(r.kind) << " run) ---\n";
            for (const auto& line : split_lines(text))
                std::cout << "  " << line << "\n";
        }

    bool pass = reasons.empty();
    for (auto& r : runs) {
        bool remove = !cli.keep && (pass || !cli.keep_failed);
        r.dir->remove_on_exit(remove);
        if (!remove) {
            std::cout << "  kept " << qmgr_kind_name(r.kind) << " instance dir: " << r.dir->path()
                      << "\n";
        } else if (!pass) {
            // The directory goes away (CI leaves nothing behind): show the end of its maillog.
            const auto& log = r.outcome.maillog;
            size_t from = log.size() > 30 ? log.size() - 30 : 0;
            std::cout << "  " << qmgr_kind_name(r.kind) << " maillog, last " << log.size() - from
                      << " of " << log.size() << " lines (rerun with --keep-failed for all):\n";
            for (size_t i = from; i < log.size(); ++i)
                std::cout << "    " << log[i] << "\n";
        }
    }
    if (pass) {
        std::cout << "compat " << sc.name << ": PASS\n";
        return 0;
    }
    std::cout << "compat " << sc.name << ": FAIL: ";
    for (size_t i = 0; i < reasons.size(); ++i)
        std::cout << (i ? "; " : "") << reasons[i];
    std::cout << "\n";
    return 1;
}
