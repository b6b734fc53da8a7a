// The Prometheus metrics of the daemon (cqmgr_metrics_listen): a snapshot of
// its state, taken on the event loop thread, and the metric families built
// from a snapshot, on any thread.  The names follow Prometheus' conventions
// (docs/admin-guide.md lists them): counters end in _total, times are in
// seconds, every name starts with cqmgr_.
#pragma once

#include "counters.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "feature_metrics.hpp"
#include "mx_resolver.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <prometheus/metric_family.h>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

class Providers;

// What a scrape shows, copied out of the daemon in one go.
struct MetricsSnapshot {
    Counters counters;
    int active_messages = 0;
    int active_recipients = 0;
    struct Transport {
        std::string name;
        int window = 0; // the sum of its live destinations' windows
        int busy = 0;   // entries with an agent
        int todo = 0;   // entries waiting
        int destinations = 0;
        int dead_destinations = 0;
        int dead = 0;      // 1 while dead
        int suspended = 0; // 1 while the administrator suspends it all
        int suspended_destinations = 0;
        int throttled_destinations = 0;
        // Entries being delivered per priority lane (urgent, normal, bulk).
        std::array<int, 3> lane_busy{};
    };
    struct Destination {
        std::string transport;
        std::string name;
        int window = 0;
        int busy = 0;
        int todo = 0;
        bool dead = false;
        bool suspended = false;     // by the administrator (its own setting)
        bool throttled = false;     // capped by the administrator
        bool share_lowered = false; // its destination share lowered by the isolation
    };
    std::vector<Transport> transports;
    std::vector<Destination> destinations;
    // The administrator's settings in force (control socket), whether or
    // not any mail in memory is covered by them.
    int suspensions = 0;
    int throttles = 0;
    // Providers with members (cqmgr_provider_maps): at most the limit of
    // them by name, the busiest first, the rest summed as "other" (last).
    struct Provider {
        std::string name;
        int members = 0; // destination queues
        int busy = 0;
        int todo = 0;
    };
    std::vector<Provider> providers;
    // The providers' MX lookups (when the daemon makes them).
    std::optional<MxResolverStats> mx;
    // The features' and the active queue's bounds (feature_metrics.hpp).
    FeatureSnapshot features;
    // How late the heartbeat fired (health.hpp).
    Histogram loop_lag;
    // incoming/, active/ and deferred/ (queue_metrics.hpp), in that order:
    // nullopt while not known yet.
    struct Queue {
        double messages = 0;
        double oldest_age = 0; // seconds; 0 when empty
        bool oldest_known = false;
    };
    std::array<std::optional<Queue>, 3> queues;
};

// Copies what the metrics show.  On the event loop thread only.  With
// `providers`, at most `provider_limit` providers get series of their own.
MetricsSnapshot take_metrics_snapshot(const core::Scheduler& sched, const Counters& counters,
                                      int active_messages, const Providers* providers = nullptr,
                                      size_t provider_limit = 0);

// The metric families of `s`.  At most `destination_limit` destinations get
// series of their own (dead, suspended, throttled or share-lowered ones
// first, then the busiest by busy + todo); the others of each transport are
// summed under destination="other".
std::vector<prometheus::MetricFamily> build_metrics(const MetricsSnapshot& s,
                                                    size_t destination_limit);

} // namespace cqmgr::qmgr
