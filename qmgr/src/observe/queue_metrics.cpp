#include "queue_metrics.hpp"

#include "metric_family.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {
using namespace metric_family;
constexpr const char* queue_names[] = {"incoming", "active", "deferred"};
} // namespace

MetricsSnapshot::Queue census_gauge(const queuefile::QueueScanner::Census& c, int64_t now) {
    MetricsSnapshot::Queue q;
    q.messages = static_cast<double>(c.files);
    // An empty queue's oldest message is no age at all (as the exporters
    // say); a queue with files of unknown birth has no oldest age.
    q.oldest_known = c.files == 0 || c.oldest > 0;
    if (c.files > 0 && c.oldest > 0)
        q.oldest_age = static_cast<double>(std::max<int64_t>(0, now - c.oldest));
    return q;
}

MetricsSnapshot::Queue active_gauge(size_t messages, std::optional<protocol::TimeVal> oldest,
                                    protocol::TimeVal now) {
    MetricsSnapshot::Queue q;
    q.messages = static_cast<double>(messages);
    q.oldest_known = true;
    if (oldest)
        q.oldest_age = std::max(0.0, static_cast<double>(now.sec - oldest->sec) +
                                         static_cast<double>(now.usec - oldest->usec) / 1e6);
    return q;
}

std::array<std::optional<MetricsSnapshot::Queue>, 3>
queue_gauges(const std::optional<queuefile::QueueScanner::Census>& incoming, size_t active,
             std::optional<protocol::TimeVal> oldest_active,
             const std::optional<queuefile::QueueScanner::Census>& deferred,
             protocol::TimeVal now) {
    std::array<std::optional<MetricsSnapshot::Queue>, 3> q;
    if (incoming) q[0] = census_gauge(*incoming, now.sec);
    q[1] = active_gauge(active, oldest_active, now);
    if (deferred) q[2] = census_gauge(*deferred, now.sec);
    return q;
}

void queue_families(std::vector<MetricFamily>& out, const MetricsSnapshot& s) {
    auto& messages = family(out, "cqmgr_queue_messages",
                            "Messages in the queue directory (incoming and deferred: as their "
                            "scans last saw each directory; active: now)",
                            MetricType::Gauge);
    for (size_t i = 0; i < s.queues.size(); ++i)
        if (s.queues[i]) sample(messages, {{"queue", queue_names[i]}}, s.queues[i]->messages);
    auto& age = family(out, "cqmgr_queue_oldest_age_seconds",
                       "Age of the queue's oldest message (incoming and deferred: from its "
                       "file's birth time; active: from its arrival); 0 when the queue is empty",
                       MetricType::Gauge);
    for (size_t i = 0; i < s.queues.size(); ++i)
        if (s.queues[i] && s.queues[i]->oldest_known)
            sample(age, {{"queue", queue_names[i]}}, s.queues[i]->oldest_age);
}

} // namespace cqmgr::qmgr
