#include "metric_family.hpp"

#include <limits>

namespace cqmgr::qmgr::metric_family {

// A new, empty family at the end of `out`; the reference is good until the
// next one is added.
MetricFamily& family(std::vector<MetricFamily>& out, std::string name, std::string help,
                     MetricType type) {
    out.push_back({std::move(name), std::move(help), type, {}});
    return out.back();
}

// Adds one counter or gauge sample to `f`.
void sample(MetricFamily& f, Labels labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    if (f.type == MetricType::Counter)
        m.counter.value = value;
    else
        m.gauge.value = value;
    f.metric.push_back(std::move(m));
}

// Adds one histogram sample to `f` (Prometheus' buckets are cumulative).
void sample(MetricFamily& f, Labels labels, const Histogram& h, std::span<const double> bounds) {
    ClientMetric m;
    m.label = std::move(labels);
    m.histogram.sample_count = h.count;
    m.histogram.sample_sum = h.sum;
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds.size(); ++i) {
        cumulative += i < h.buckets.size() ? h.buckets[i] : 0;
        double bound = i < bounds.size() ? bounds[i] : std::numeric_limits<double>::infinity();
        m.histogram.bucket.push_back({cumulative, bound});
    }
    f.metric.push_back(std::move(m));
}

} // namespace cqmgr::qmgr::metric_family
