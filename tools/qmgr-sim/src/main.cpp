// qmgr-sim: plays a workload (TOML: destinations and messages) through
// cqmgr's real scheduler core on a simulated clock, with the scheduler
// settings a real main.cf and master.cf give the daemon, and reports per
// destination what was delivered and at which concurrency, per message its
// delay, and optionally the timeline as CSV and as a PNG drawn by gnuplot.
// For admins trying concurrency, feedback and preemption settings, and
// cqmgr's providers, reply rules and sender limits, before touching a
// live system.  See README.md and docs/admin-guide.md.
#include "plot.hpp"
#include "postfix_config.hpp"
#include "summary.hpp"
#include "timeline_csv.hpp"
#include "workload.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

using namespace cqmgr;

namespace {

// Splits "name=value" (as postconf -o and the daemons take it).
std::pair<std::string, std::string> name_value(const std::string& arg) {
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0)
        throw std::invalid_argument("-o: expected name=value, got \"" + arg + "\"");
    auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(" \t"));
        s.erase(s.find_last_not_of(" \t") + 1);
        return s;
    };
    return {trim(arg.substr(0, eq)), trim(arg.substr(eq + 1))};
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"Plays a workload through cqmgr's scheduler on a simulated clock, with the\n"
                 "settings of a Postfix main.cf and master.cf (Postfix's defaults if none).",
                 "qmgr-sim"};
    sim::PostfixSources sources;
    std::string workload_path, csv_path, png_path;
    std::vector<std::string> overrides;
    bool timeline = false;
    app.add_option("workload", workload_path, "the workload file (TOML; see README.md)")
        ->type_name("WORKLOAD.toml")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_option("-c,--config-dir", sources.config_dir,
                   "read DIR/main.cf and DIR/master.cf (e.g. /etc/postfix)")
        ->type_name("DIR")
        ->check(CLI::ExistingDirectory);
    app.add_option("--main-cf", sources.main_cf, "read this main.cf (instead of DIR/main.cf)")
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
    app.add_option("--master-cf", sources.master_cf,
                   "read this master.cf (instead of DIR/master.cf)")
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
    app.add_option("-o", overrides, "set a main.cf parameter, name=value (repeatable)")
        ->type_name("NAME=VALUE");
    app.add_option("--csv", csv_path, "write the timeline to FILE as CSV")->type_name("FILE");
    app.add_option("--plot", png_path, "draw the timeline into FILE (PNG) with gnuplot")
        ->type_name("FILE.png");
    app.add_flag("--timeline", timeline, "print the sessions per destination over time");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help answers 0; a mistake on the command line 2, as any other.
        return app.exit(e) == 0 ? 0 : 2;
    }

    try {
        for (const auto& o : overrides)
            sources.overrides.push_back(name_value(o));
        sim::Workload w = sim::read_workload(workload_path);
        sim::apply_postfix_config(sources, w, [](const std::string& text) {
            std::cerr << "qmgr-sim: warning: " << text << "\n";
        });
        core::SimResult result = core::simulate(w.sim, w.hooks.get());
        sim::print_summary(w.sim, result, std::cout);
        if (timeline) sim::print_timeline(result, std::cout);
        if (!csv_path.empty()) {
            std::ofstream csv(csv_path);
            sim::write_csv(sim::timeline_columns(w.sim, result), result, csv);
            if (!csv.flush()) throw std::runtime_error(csv_path + ": cannot write it");
        }
        if (!png_path.empty())
            sim::run_gnuplot(sim::gnuplot_script(
                w.sim, result, png_path,
                "qmgr-sim: " + std::filesystem::path(workload_path).filename().string()));
    } catch (const std::exception& e) {
        std::cerr << "qmgr-sim: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
