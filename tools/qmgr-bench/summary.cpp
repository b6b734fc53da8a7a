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

// Medians of one figure over the successful runs of one kind.
double median_of_kind(const std::vector<RunResult>& runs, compat::QmgrKind kind,
                      const std::string& id, int& count) {
    std::vector<double> v;
    for (const auto& r : runs)
        if (r.kind == kind && r.error.empty() && r.metrics.count(id)) v.push_back(r.metrics.at(id));
    count = static_cast<int>(v.size());
    return median(v);
}

// Common figures, then the workload's own.
std::vector<MetricDef> all_metrics(const Workload& w) {
    std::vector<MetricDef> defs = common_metrics(w.live_injection());
    for (auto& d : w.extra_metrics())
        defs.push_back(d);
    return defs;
}

} // namespace

// "flush 1 stock: drain 12.31 s, CPU 4.10 s (205.0 µs/rcpt), peak RSS 7,544 kB, ...".
void print_run_line(std::ostream& out, const Workload& w, int pair, const RunResult& r) {
    out << "  " << w.name() << " pair " << pair << " " << compat::qmgr_kind_name(r.kind) << ": ";
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

// Ratio of the medians; "-" where a side has no successful run or a zero median.
void print_table(std::ostream& out, const Workload& w, const std::vector<RunResult>& runs) {
    int n_stock = 0, n_cqmgr = 0;
    median_of_kind(runs, compat::QmgrKind::Stock, "drain", n_stock);
    median_of_kind(runs, compat::QmgrKind::Cqmgr, "drain", n_cqmgr);
    out << "\n### " << w.name() << "\n\n"
        << w.describe() << ". Medians of " << n_stock << " stock and " << n_cqmgr
        << " cqmgr runs, alternated.\n\n"
        << "| figure | stock qmgr | cqmgr | cqmgr/stock |\n|---|---|---|---|\n";
    for (const auto& d : all_metrics(w)) {
        int a = 0, b = 0;
        double s = median_of_kind(runs, compat::QmgrKind::Stock, d.id, a);
        double c = median_of_kind(runs, compat::QmgrKind::Cqmgr, d.id, b);
        std::string ratio = (a && b && s != 0) ? format_value(c / s, 2) : "-";
        out << "| " << d.label << " | " << (a ? format_value(s, d.decimals) : "-") << " | "
            << (b ? format_value(c, d.decimals) : "-") << " | " << ratio << " |\n";
    }
    out << std::flush;
}

} // namespace bench
