// The figures one run yields, by id, and how the tables label them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace bench {

using Metrics = std::map<std::string, double>;

struct MetricDef {
    std::string id;
    std::string label; // with its unit
    int decimals = 2;
};

// The figures every workload reports: drain, cpu, cpu_user, cpu_per_rcpt, rss, rate,
// first. Drain time and first delivery count from `from` (the workload's
// measured_from()).
std::vector<MetricDef> common_metrics(const std::string& from);

// The middle value (the mean of the two middle ones for an even count); 0 if empty.
double median(std::vector<double> values);
// The p-th percentile (0..100) of `values`, nearest rank; 0 when empty.
double percentile(std::vector<double> values, double p);

} // namespace bench
