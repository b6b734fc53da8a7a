#include "metrics.hpp"

#include <algorithm>
#include <string>

namespace bench {

// In table order.
std::vector<MetricDef> common_metrics(const std::string& from) {
    return {
        {"drain", "drain time, " + from + " to last delivery (s)", 2},
        {"cpu", "queue-manager CPU, utime+stime (s)", 2},
        {"cpu_user", "queue-manager CPU, of that utime (s)", 2},
        {"cpu_per_rcpt", "queue-manager CPU per recipient (µs)", 1},
        {"rss", "queue-manager peak RSS, VmHWM (kB)", 0},
        {"rate", "delivered recipients per second", 0},
        {"first", "first delivery after " + from + " (s)", 3},
    };
}

// Sorts a copy.
double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Sorts a copy.
double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size()) + 0.999999);
    return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

} // namespace bench
