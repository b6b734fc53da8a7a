// Building Prometheus metric families by hand (observe/metrics.cpp and the
// providers' series): a family at the end of a list, and its samples.
#pragma once

#include "counters.hpp"

#include <prometheus/metric_family.h>
#include <span>
#include <string>
#include <vector>

namespace cqmgr::qmgr::metric_family {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// A new, empty family at the end of `out`; the reference is good until the
// next one is added.
MetricFamily& family(std::vector<MetricFamily>& out, std::string name, std::string help,
                     MetricType type);
// Adds one counter or gauge sample to `f`.
void sample(MetricFamily& f, Labels labels, double value);
// Adds one histogram sample to `f` (Prometheus' buckets are cumulative).
void sample(MetricFamily& f, Labels labels, const Histogram& h, std::span<const double> bounds);

} // namespace cqmgr::qmgr::metric_family
