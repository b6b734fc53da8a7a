#include "soak_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

namespace bench {
namespace {

// "%.Nf".
std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string mb(double kb) {
    return fixed(kb / 1024.0, 1);
}

// "5-10" in minutes (with one decimal below ten minutes' precision).
std::string minutes(double from, double to) {
    auto m = [](double s) {
        double v = s / 60;
        return std::fabs(v - std::round(v)) < 0.05 ? fixed(v, 0) : fixed(v, 1);
    };
    return m(from) + "–" + m(to);
}

// A table row: label, then one cell per side.
void row(std::ostream& o, const std::string& label, const SoakResult& r,
         const std::function<std::string(const SoakSideResult&)>& cell) {
    o << "| " << label;
    for (const auto& s : r.sides)
        o << " | " << cell(s);
    o << " |\n";
}

std::string num(std::uint64_t v) {
    return std::to_string(v);
}

// Slack for "flat": 10 % of the early figure, at least 3 descriptors.
double fd_slack(double early) {
    return std::max(3.0, std::ceil(early * 0.10));
}

struct Verdict {
    std::string point;
    bool pass;
    std::string evidence;
};

// The acceptance points, judged on cqmgr's side.
std::vector<Verdict> verdicts(const SoakResult& r, const SoakSideResult& c) {
    std::vector<Verdict> v;
    const auto& t = c.tally;
    bool nothing_lost = r.drained && t.lost == 0 && t.left == 0 && c.queued == 0 &&
                        c.corrupt == 0 && t.wrong == 0 && t.duplicates_other == 0;
    v.push_back({"cqmgr loses, duplicates and leaves nothing", nothing_lost,
                 "lost " + num(t.lost) + ", left " + num(t.left) + " (" + num(c.queued) +
                     " queue files, " + num(c.corrupt) + " in corrupt/), wrong status " +
                     num(t.wrong) + ", duplicates " + num(t.duplicates_other) +
                     " beyond postsuper -r (" + num(t.duplicates_requeue) + " after it, " +
                     num(t.duplicates_injection) + " after an injection retry)" +
                     (r.drained ? "" : "; the drain did not finish")});
    std::size_t expected = 1 + static_cast<std::size_t>(r.planned_restarts);
    bool calm = c.fatal_count == 0 && c.qmgr_processes <= expected;
    v.push_back({"no panic or fatal in cqmgr's maillog, no unplanned restart", calm,
                 num(c.fatal_count) + " fatal/panic lines; " + num(c.qmgr_processes) +
                     " queue-manager processes seen (" + num(expected) + " planned)"});
    bool fds_known = c.early.samples > 0 && c.late.samples > 0;
    // The floor and the middle: a leaked descriptor stays, and raises both;
    // the top follows the deliveries in flight at the moment.
    bool flat = fds_known && c.late.fds_min <= c.early.fds_min + fd_slack(c.early.fds_min) &&
                c.late.fds_median <= c.early.fds_median + fd_slack(c.early.fds_median);
    v.push_back({"cqmgr's descriptors are flat", flat,
                 "minutes " + minutes(r.early_from, r.early_to) + ": lowest " +
                     std::to_string(c.early.fds_min) + ", median " + fixed(c.early.fds_median, 0) +
                     ", highest " + std::to_string(c.early.fds_max) + "; minutes " +
                     minutes(r.late_from, r.late_to) + ": " + std::to_string(c.late.fds_min) +
                     ", " + fixed(c.late.fds_median, 0) + ", " + std::to_string(c.late.fds_max) +
                     " (flat: lowest and median no more than 10 %, at least 3, higher)"});
    double ratio = c.early.rss_mean_kb > 0 ? c.late.rss_mean_kb / c.early.rss_mean_kb : 0;
    bool rss = fds_known && std::fabs(ratio - 1) <= 0.10;
    v.push_back({"cqmgr's RSS in the last window is within 10 % of the early one", rss,
                 "mean " + mb(c.early.rss_mean_kb) + " MB in minutes " +
                     minutes(r.early_from, r.early_to) + ", " + mb(c.late.rss_mean_kb) +
                     " MB in minutes " + minutes(r.late_from, r.late_to) + " (" +
                     fixed((ratio - 1) * 100, 1) +
                     " %; files in active/: " + fixed(c.early.active_mean, 0) + " and " +
                     fixed(c.late.active_mean, 0) + " on average)"});
    return v;
}

// The figures table, in Markdown.
std::string figures(const SoakResult& r) {
    std::ostringstream o;
    o << "| figure";
    for (const auto& s : r.sides)
        o << " | " << s.name;
    o << " |\n|---";
    for (size_t i = 0; i < r.sides.size(); ++i)
        o << "|---";
    o << "|\n";
    using S = const SoakSideResult&;
    row(o, "messages injected", r, [](S s) { return num(s.tally.messages); });
    row(o, "recipients", r, [](S s) { return num(s.tally.recipients); });
    row(o, "delivered once", r, [](S s) { return num(s.tally.delivered); });
    row(o, "bounced once (as expected)", r, [](S s) { return num(s.tally.bounced); });
    row(o, "duplicates, message requeued by postsuper -r from incoming/active", r,
        [](S s) { return num(s.tally.duplicates_requeue); });
    row(o, "duplicates, message sent again by the injection", r,
        [](S s) { return num(s.tally.duplicates_injection); });
    row(o, "duplicates, other", r, [](S s) { return num(s.tally.duplicates_other); });
    row(o, "wrong final status", r, [](S s) { return num(s.tally.wrong); });
    row(o, "left in the queue (recipients)", r, [](S s) { return num(s.tally.left); });
    row(o, "lost (recipients)", r, [](S s) { return num(s.tally.lost); });
    row(o, "queue files at the end (corrupt/ apart)", r, [](S s) { return num(s.queued); });
    row(o, "files in corrupt/", r, [](S s) { return num(s.corrupt); });
    row(o, "status=sent / status=deferred lines", r,
        [](S s) { return num(s.sent_lines) + " / " + num(s.deferred_lines); });
    row(o, "fatal and panic lines", r, [](S s) { return num(s.fatal_count); });
    row(o, "queue-manager processes seen (" + num(1 + r.planned_restarts) + " planned)", r,
        [](S s) { return num(s.qmgr_processes); });
    const std::string early = "minutes " + minutes(r.early_from, r.early_to);
    const std::string late = "minutes " + minutes(r.late_from, r.late_to);
    row(o, "queue manager's RSS, mean (max), " + early + " (MB)", r,
        [](S s) { return mb(s.early.rss_mean_kb) + " (" + mb(s.early.rss_max_kb) + ")"; });
    row(o, "queue manager's RSS, mean (max), " + late + " (MB)", r,
        [](S s) { return mb(s.late.rss_mean_kb) + " (" + mb(s.late.rss_max_kb) + ")"; });
    row(o, "RSS change, mean " + late + " against " + early, r, [](S s) {
        return s.early.rss_mean_kb > 0
                   ? fixed((s.late.rss_mean_kb / s.early.rss_mean_kb - 1) * 100, 1) + " %"
                   : std::string("-");
    });
    row(o, "files in active/ / deferred/, mean, " + early, r, [](S s) {
        return fixed(s.early.active_mean, 0) + " / " + fixed(s.early.deferred_mean, 0);
    });
    row(o, "files in active/ / deferred/, mean, " + late, r,
        [](S s) { return fixed(s.late.active_mean, 0) + " / " + fixed(s.late.deferred_mean, 0); });
    row(o, "descriptors min–max (median), " + early, r, [](S s) {
        return std::to_string(s.early.fds_min) + "–" + std::to_string(s.early.fds_max) + " (" +
               fixed(s.early.fds_median, 0) + ")";
    });
    row(o, "descriptors min–max (median), " + late, r, [](S s) {
        return std::to_string(s.late.fds_min) + "–" + std::to_string(s.late.fds_max) + " (" +
               fixed(s.late.fds_median, 0) + ")";
    });
    auto store = [](const SoakWindow& w) {
        if (w.store_bytes_last == 0) return std::string("-");
        return fixed(static_cast<double>(w.store_bytes_last) / 1024, 0) + " kB, " +
               (w.store_records_last < 0 ? std::string("?")
                                         : std::to_string(w.store_records_last)) +
               " records";
    };
    row(o, "state store, end of " + early, r, [&](S s) { return store(s.early); });
    row(o, "state store, end of " + late, r, [&](S s) { return store(s.late); });
    row(o, "state store, after the drain", r, [&](S s) { return store(s.end); });
    return o.str();
}

// A gnuplot script for the four plots; "" if gnuplot is not installed.
void plot(const SoakResult& r, const std::string& dir, std::ostream& out) {
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
        out << "  (no gnuplot: no plots; Debian: apt install gnuplot-nox)\n";
        return;
    }
    std::ostringstream g;
    g << "set terminal pngcairo noenhanced size 1000,500 font 'sans,10'\n"
         "set datafile separator '\\t'\nset key top left\nset grid\n"
         "set xlabel 'minutes since injection began'\n"
      << "set arrow from " << r.duration / 60 << ", graph 0 to " << r.duration / 60
      << ", graph 1 nohead dt 2\n";
    auto lines = [&](const std::string& png, const std::string& title, const std::string& ylabel,
                     const std::string& col, bool cqmgr_only) {
        g << "set output '" << dir << "/" << png << "'\nset title '" << title << "'\nset ylabel '"
          << ylabel << "'\nplot ";
        std::string sep;
        for (const auto& s : r.sides) {
            if (cqmgr_only && s.name != "cqmgr") continue;
            g << sep << "'" << s.samples_tsv << "' using ($1/60):(" << col << ") with lines title '"
              << s.name << "'";
            sep = ", ";
        }
        g << "\n";
    };
    lines("soak-rss.png", "queue manager resident set", "MB", "$2>0 ? $3/1024 : 1/0", false);
    lines("soak-fds.png", "queue manager open descriptors", "descriptors", "$2>0 ? $4 : 1/0",
          false);
    g << "set output '" << dir
      << "/soak-queue.png'\nset title 'files in active/ and deferred/'\nset ylabel 'files'\nplot ";
    std::string sep;
    for (const auto& s : r.sides)
        for (auto [col, what] : {std::pair{8, "active"}, std::pair{9, "deferred"}}) {
            g << sep << "'" << s.samples_tsv << "' using ($1/60):" << col << " with lines title '"
              << s.name << " " << what << "'";
            sep = ", ";
        }
    g << "\n";
    g << "set yrange [0:*]\nset y2range [0:*]\nset y2tics\nset ytics nomirror\nset output '" << dir
      << "/soak-store.png'\nset title 'cqmgr state store'\nset ylabel 'kB'\nset y2label "
         "'records'\n";
    for (const auto& s : r.sides)
        if (s.name == "cqmgr")
            g << "plot '" << s.samples_tsv
              << "' using ($1/60):($5>0 ? $5/1024 : 1/0) with lines title 'size (kB)', '"
              << s.samples_tsv
              << "' using ($1/60):($6>=0 ? $6 : 1/0) axes x1y2 with lines title 'records'\n";
    std::string script = dir + "/soak.gnuplot";
    std::ofstream(script) << g.str();
    if (std::system(("gnuplot '" + script + "' 2>'" + dir + "/gnuplot.err'").c_str()) == 0)
        out << "  plots: " << dir << "/soak-{rss,fds,queue,store}.png\n";
    else
        out << "  gnuplot failed: see " << dir << "/gnuplot.err\n";
}

} // namespace

bool report_soak(const SoakResult& r, const std::string& out_dir, std::ostream& out) {
    std::ostringstream md;
    md << "### soak\n\n"
       << fixed(r.duration / 60, 1) << " minutes of injection at " << fixed(r.rate, 1)
       << " messages/s into each side at once; drain " << (r.drained ? "finished" : "NOT finished")
       << " after " << static_cast<int>(r.drain_seconds) << " s. " << r.events << " events ("
       << r.events_failed << " failed), " << r.scrapes << " metrics scrapes (" << r.scrapes_failed
       << " failed); suspensions and throttles left after the drain: "
       << (r.control_settings_left < 0 ? std::string("unknown") : fixed(r.control_settings_left, 0))
       << ".\n\n"
       << figures(r);
    bool pass = true;
    for (const auto& s : r.sides) {
        if (s.name != "cqmgr") continue;
        md << "\nVerdict:\n\n";
        for (const auto& v : verdicts(r, s)) {
            md << "- " << (v.pass ? "PASS" : "FAIL") << ": " << v.point << " — " << v.evidence
               << "\n";
            pass = pass && v.pass;
        }
    }
    for (const auto& s : r.sides) {
        if (!s.tally.examples.empty()) {
            md << "\n" << s.name << ", recipients behind the bad counts:\n\n";
            for (const auto& e : s.tally.examples)
                md << "- " << e << "\n";
        }
        if (!s.fatal_lines.empty()) {
            md << "\n"
               << s.name << ", fatal and panic lines (first " << s.fatal_lines.size()
               << "):\n\n```\n";
            for (const auto& l : s.fatal_lines)
                md << l << "\n";
            md << "```\n";
        }
        if (!s.warnings.empty()) {
            md << "\n" << s.name << ", queue manager's and master's warnings (digits as N):\n\n";
            size_t shown = 0;
            for (const auto& [text, count] : s.warnings) {
                if (++shown > 15) break;
                md << "- " << count << " × `" << text << "`\n";
            }
        }
    }
    out << "\n" << md.str();
    std::ofstream(out_dir + "/verdict.md") << md.str();
    plot(r, out_dir, out);
    out << "  verdict: " << out_dir << "/verdict.md\n" << std::flush;
    return pass;
}

} // namespace bench
