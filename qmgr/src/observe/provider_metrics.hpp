// The providers' metric series (cqmgr_provider_*) and those of their MX
// lookups (cqmgr_provider_mx_*), for build_metrics().
#pragma once

#include "metrics.hpp"

#include <prometheus/metric_family.h>
#include <vector>

namespace cqmgr::qmgr {

class Providers;

// The providers' series (MetricsSnapshot::providers, bounded already).
void provider_families(std::vector<prometheus::MetricFamily>& out, const MetricsSnapshot& s);
// The providers' MX lookups (MetricsSnapshot::mx): a fixed set of series,
// one per outcome.
void mx_families(std::vector<prometheus::MetricFamily>& out, const MxResolverStats& m);
// The providers with members, at most `limit` by name (the busiest by busy
// + todo, then by name), the rest summed as "other", which a real provider
// named so always joins.
std::vector<MetricsSnapshot::Provider> provider_rows(const core::Scheduler& sched,
                                                     const Providers& providers, size_t limit);

} // namespace cqmgr::qmgr
