#include "plot.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace cqmgr::sim {

namespace {

// `text` as a gnuplot single-quoted string.
std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += '\'';
        out += c;
    }
    return out + "'";
}

// The 1-based gnuplot column of `name`.
int column(const std::vector<Column>& cols, const std::string& name) {
    for (size_t i = 0; i < cols.size(); ++i)
        if (cols[i].name == name) return static_cast<int>(i) + 1;
    return 0;
}

// One panel of the picture: its settings and its curves.
struct Panel {
    std::string settings; // gnuplot commands before its plot command
    std::vector<std::string> curves;
    size_t widest = 0; // the longest curve title, for the key's margin

    // Adds column `name` against time.
    void add(const std::vector<Column>& cols, const std::string& name, const std::string& style,
             const std::string& title) {
        add_curve("$timeline using 1:" + std::to_string(column(cols, name)), style, title);
    }
    // Adds a curve: `what` (a data source or an expression) drawn in `style`.
    void add_curve(const std::string& what, const std::string& style, const std::string& title) {
        curves.push_back(what + " with " + style + " title " + quoted(title));
        widest = std::max(widest, title.size());
    }
    // The panel's commands.
    std::string script() const {
        std::string out = settings + "plot ";
        for (size_t i = 0; i < curves.size(); ++i)
            out += (i ? ", \\\n     " : "") + curves[i];
        return out + "\n";
    }
};

// The colour of the i-th destination or transport, or the same colour
// half transparent (for the wide line drawn under a thin one).
std::string colour(int i, bool translucent = false) {
    static const char* const palette[] = {"1f77b4", "d62728", "2ca02c", "9467bd",
                                          "ff7f0e", "8c564b", "e377c2", "17becf"};
    return std::string(" lc rgb '#") + (translucent ? "80" : "") + palette[i % 8] + "'";
}

// True when `program` is an executable file in a directory of PATH.
bool in_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');)
        if (::access(((dir.empty() ? "." : dir) + "/" + program).c_str(), X_OK) == 0) return true;
    return false;
}

} // namespace

std::string gnuplot_script(const core::SimConfig& config, const core::SimResult& result,
                           const std::string& png, const std::string& title) {
    auto cols = timeline_columns(config, result);
    std::ostringstream s;
    s << "set terminal pngcairo noenhanced size 1200,1100 font 'sans,11'\n"
      << "set output " << quoted(png) << "\n"
      << "set datafile separator ','\n"
      << "$timeline << EOD\n";
    write_csv(cols, result, s);
    Panel windows, agents, done;
    windows.settings = "set title 'Concurrency per destination: the scheduler''s window and the "
                       "sessions open'\nset ylabel 'connections'\n";
    int i = 0;
    for (const auto& d : config.destinations) {
        windows.add(cols, "window:" + d.name, "steps lw 6" + colour(i, true), d.name + " window");
        windows.add(cols, "sessions:" + d.name, "steps lw 1.5" + colour(i), d.name + " sessions");
        ++i;
    }
    // A shared receiver's sessions across its destinations, and its limit.
    for (const auto& p : config.providers) {
        windows.add(cols, "sessions:provider:" + p.name, "steps lw 3 lc rgb 'black'",
                    p.name + " sessions (all its destinations)");
        if (p.session_limit > 0)
            windows.add_curve(std::to_string(p.session_limit), "lines dt 3 lw 1.5 lc rgb 'black'",
                              p.name + " session limit");
    }

    agents.settings = "set title 'Delivery agents per transport: busy, and connections waiting "
                      "for one'\nset ylabel 'agents'\n";
    i = 0;
    for (const auto& c : cols) {
        if (c.name.rfind("agents:", 0) != 0) continue;
        std::string t = c.name.substr(7);
        auto busy = result.max_busy_agents.find(t);
        int most = busy == result.max_busy_agents.end() ? 0 : busy->second;
        auto limit = config.process_limits.find(t);
        // A limit far above what was used would flatten the curves: it is
        // drawn only when the agents came near it, else named.
        bool near = limit != config.process_limits.end() && limit->second <= 2 * most;
        std::string busy_title = t + " busy agents";
        if (limit != config.process_limits.end() && !near)
            busy_title += " (process limit " + std::to_string(limit->second) + ")";
        agents.add(cols, c.name, "steps lw 2" + colour(i), busy_title);
        agents.add(cols, "waiting:" + t, "steps dt 2 lw 1.5" + colour(i), t + " waiting for one");
        if (near)
            agents.add_curve(std::to_string(limit->second), "lines dt 3 lw 1.5" + colour(i),
                             t + " process limit (master.cf)");
        ++i;
    }

    done.settings = "set title 'Recipients and messages finished so far'\n"
                    "set ylabel 'recipients'\nset y2label 'messages'\n"
                    "set ytics nomirror\n";
    // Whole messages on the right axis, in steps of 1, 2 or 5 times a
    // power of ten, about five of them.
    size_t messages = config.messages.size(), step = 1;
    for (size_t unit = 1; step * 5 < messages; unit *= 10)
        for (size_t m : {1, 2, 5})
            if (step * 5 < messages) step = m * unit;
    done.settings += "set y2range [0:*]\nset y2tics 0, " + std::to_string(step) + "\n";
    done.add(cols, "delivered", "lines lw 2 lc rgb 'dark-green'", "recipients delivered");
    done.add(cols, "deferred", "lines lw 2 lc rgb 'red'", "recipients deferred");
    done.add(cols, "messages_done", "steps lw 1.5 lc rgb 'black'", "messages done (right axis)");
    done.curves.back().insert(done.curves.back().find(" with"), " axes x1y2");

    size_t widest = std::max({windows.widest, agents.widest, done.widest});
    s << "EOD\n"
      << "set multiplot layout 3,1 title " << quoted(title) << " font ',14'\n"
      << "set grid\n"
      << "set key outside right top reverse Left\n"
      << "set lmargin 10\n"
      // The key's text and its sample line, the same for the three panels
      // so that their time axes line up.
      << "set rmargin " << widest + 12 << "\n"
      << "set xrange [0:" << std::max(result.end_time, 1.0) << "]\n"
      << "set xlabel 'simulated time (s)'\n"
      << "set yrange [0:*]\n"
      << "set offsets graph 0, graph 0, graph 0.1, graph 0\n"
      << windows.script() << agents.script() << done.script() << "unset multiplot\n";
    return s.str();
}

void run_gnuplot(const std::string& script) {
    if (!in_path("gnuplot"))
        throw PlotError("--plot needs gnuplot, which is not in PATH (Debian: apt install "
                        "gnuplot-nox)");
    FILE* p = ::popen("gnuplot", "w");
    if (!p) throw PlotError("cannot run gnuplot");
    std::fwrite(script.data(), 1, script.size(), p);
    int status = ::pclose(p);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw PlotError("gnuplot failed (its messages are above)");
}

} // namespace cqmgr::sim
