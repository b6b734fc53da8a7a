#include "summary.hpp"

#include <cstdio>

namespace bench {
namespace {

// A figure with `decimals` places; whole numbers get thousands separators.
std::string format_value(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (decimals > 0) return buf;
    std::string digits = buf, out;
    size_t lead = digits[0] == '-' ? 1 : 0;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > lead && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// Medians of one figure over the successful runs of one side.
double median_of_side(const std::vector<RunResult>& runs, const std::string& side,
                      const std::string& id, int& count) {
    std::vector<double> v;
    for (const auto& r : runs)
        if (r.side == side && r.error.empty() && r.metrics.count(id)) v.push_back(r.metrics.at(id));
    count = static_cast<int>(v.size());
    return median(v);
}

// Common figures, then the workload's own, then the deferrals and the
// poller's (where a run has them).
std::vector<MetricDef> all_metrics(const Workload& w) {
    std::vector<MetricDef> defs = common_metrics(w.measured_from());
    for (auto& d : w.extra_metrics())
        defs.push_back(d);
    defs.push_back({"active_peak", "peak messages in active/ (sampled every 0.1 s)", 0});
    defs.push_back({"connections_peak", "peak connections to a sink (sampled every 50 ms)", 0});
    defs.push_back({"deferred", "status=deferred lines", 0});
    defs.push_back({"deferred_pct", "deferred, % of sent+deferred lines", 1});
    defs.push_back({"scrapes", "metrics scrapes while polled", 0});
    defs.push_back({"failed_scrapes", "failed scrapes", 0});
    return defs;
}

// The column heading of a side.
std::string heading(const std::string& side) {
    if (side == "stock") return "stock qmgr";
    if (side == "polled") return "cqmgr polled";
    return side;
}

} // namespace

// "flush 1 stock: drain 12.31 s, CPU 4.10 s (205.0 µs/rcpt), peak RSS 7,544 kB, ...".
void print_run_line(std::ostream& out, const Workload& w, int pair, const RunResult& r) {
    out << "  " << w.name() << " pair " << pair << " " << r.side << ": ";
    if (!r.error.empty()) {
        out << "FAILED: " << r.error << "\n" << std::flush;
        return;
    }
    bool first = true;
    for (const auto& d : all_metrics(w)) {
        if (!r.metrics.count(d.id)) continue;
        out << (first ? "" : ", ") << d.id << "=" << format_value(r.metrics.at(d.id), d.decimals);
        first = false;
    }
    out << "\n" << std::flush;
}

// Ratio of the medians (b/a); "-" where a side has no successful run or a
// zero median. Figures neither side has (the poller's, unpolled) are left out.
void print_table(std::ostream& out, const Workload& w, const std::vector<RunResult>& runs,
                 const std::string& a, const std::string& b) {
    int n_a = 0, n_b = 0;
    median_of_side(runs, a, "cpu", n_a);
    median_of_side(runs, b, "cpu", n_b);
    out << "\n### " << w.name() << (b == "polled" ? " (polled)" : "") << "\n\n"
        << w.describe() << ". Medians of " << n_a << " " << a << " and " << n_b << " " << b
        << " runs, alternated.\n\n"
        << "| figure | " << heading(a) << " | " << heading(b) << " | " << b << "/" << a
        << " |\n|---|---|---|---|\n";
    for (const auto& d : all_metrics(w)) {
        int ca = 0, cb = 0;
        double va = median_of_side(runs, a, d.id, ca);
        double vb = median_of_side(runs, b, d.id, cb);
        if (!ca && !cb) continue;
        std::string ratio = (ca && cb && va != 0) ? format_value(vb / va, 3) : "-";
        out << "| " << d.label << " | " << (ca ? format_value(va, d.decimals) : "-") << " | "
            << (cb ? format_value(vb, d.decimals) : "-") << " | " << ratio << " |\n";
    }
    out << std::flush;
}

} // namespace bench
