#include "provider_metrics.hpp"

#include "metric_family.hpp"
#include "providers.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

using namespace metric_family;

void provider_families(std::vector<MetricFamily>& out, const MetricsSnapshot& s) {
    if (s.providers.empty()) return;
    // Made first and filled through their index: a reference into `out`
    // would not survive the next family's push_back.
    const size_t first = out.size();
    family(out, "cqmgr_provider_members",
           "Destination queues that belong to the provider (for provider=\"other\" "
           "those of the providers not shown)",
           MetricType::Gauge);
    family(out, "cqmgr_provider_busy", "Entries being delivered to the provider's destinations",
           MetricType::Gauge);
    family(out, "cqmgr_provider_todo", "Entries waiting for the provider's destinations",
           MetricType::Gauge);
    for (const auto& p : s.providers) {
        sample(out[first], {{"provider", p.name}}, p.members);
        sample(out[first + 1], {{"provider", p.name}}, p.busy);
        sample(out[first + 2], {{"provider", p.name}}, p.todo);
    }
}

void mx_families(std::vector<MetricFamily>& out, const MxResolverStats& m) {
    auto counter = [&out](std::string name, std::string help, uint64_t v) {
        sample(family(out, std::move(name), std::move(help), MetricType::Counter), {},
               static_cast<double>(v));
    };
    auto gauge = [&out](std::string name, std::string help, size_t v) {
        sample(family(out, std::move(name), std::move(help), MetricType::Gauge), {},
               static_cast<double>(v));
    };
    counter("cqmgr_provider_mx_lookups_total", "MX lookups asked for destinations", m.lookups);
    counter("cqmgr_provider_mx_cache_hits_total", "MX lookups answered from the cache",
            m.cache_hits);
    counter("cqmgr_provider_mx_queries_total", "MX queries sent to DNS", m.queries);
    counter("cqmgr_provider_mx_deadlines_total", "MX lookups ended by their deadline", m.deadlines);
    auto& results = family(out, "cqmgr_provider_mx_results_total", "MX lookups' results by outcome",
                           MetricType::Counter);
    for (size_t i = 0; i < m.outcomes.size(); ++i)
        sample(results, {{"outcome", outcome_name(static_cast<MxOutcome>(i))}},
               static_cast<double>(m.outcomes[i]));
    gauge("cqmgr_provider_mx_in_flight", "MX queries sent and not finished", m.in_flight);
    gauge("cqmgr_provider_mx_queued", "Domains waiting for an MX query slot", m.queued);
    gauge("cqmgr_provider_mx_cached", "MX answers in the cache", m.cached);
}

std::vector<MetricsSnapshot::Provider> provider_rows(const core::Scheduler& sched,
                                                     const Providers& providers, size_t limit) {
    std::vector<MetricsSnapshot::Provider> all;
    for (const auto& [name, members] : providers.members()) {
        MetricsSnapshot::Provider p{name, static_cast<int>(members.size()), 0, 0};
        for (const auto& [transport, queue] : members)
            if (const core::Queue* q = sched.find_queue(transport, queue)) {
                p.busy += q->busy_count();
                p.todo += q->todo_count();
            }
        all.push_back(std::move(p));
    }
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return a.busy + a.todo > b.busy + b.todo;
    });
    std::vector<MetricsSnapshot::Provider> rows;
    MetricsSnapshot::Provider other{"other", 0, 0, 0};
    for (auto& p : all) {
        if (rows.size() < limit && p.name != "other") {
            rows.push_back(std::move(p));
            continue;
        }
        other.members += p.members;
        other.busy += p.busy;
        other.todo += p.todo;
    }
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    if (other.members > 0) rows.push_back(other);
    return rows;
}

} // namespace cqmgr::qmgr
