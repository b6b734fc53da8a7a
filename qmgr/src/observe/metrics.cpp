#include "metrics.hpp"

#include "health.hpp"
#include "metric_family.hpp"
#include "provider_metrics.hpp"
#include "queue_metrics.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <span>
#include <tuple>

namespace cqmgr::qmgr {

namespace {

using namespace metric_family;

// The delivery counters: every result with the usual hop status classes
// (so that rate() sees them from the start), and rarer classes once seen.
// Class 2 is not a usual one: agents report a hop status only when the
// destination itself failed.
void delivery_families(std::vector<MetricFamily>& out, const Counters& c) {
    static constexpr const char* results[] = {"done", "deferred", "crashed", "unavailable"};
    static constexpr const char* classes[] = {"none", "1", "2", "3", "4", "5"};
    auto& f = family(out, "cqmgr_deliveries_total",
                     "Delivery requests by transport, result (done: every recipient finished; "
                     "deferred: some were not; crashed: no valid reply; unavailable: the request "
                     "never reached an agent) and the class of the agent's hop status",
                     MetricType::Counter);
    for (const auto& [transport, by_result] : c.deliveries_by_class)
        for (size_t r = 0; r < 4; ++r)
            for (size_t k = 0; k < 6; ++k)
                if (k == 0 || k == 4 || k == 5 || by_result[r][k] > 0)
                    sample(f,
                           {{"transport", transport},
                            {"status", results[r]},
                            {"dsn_class", classes[k]}},
                           static_cast<double>(by_result[r][k]));
}

void message_families(std::vector<MetricFamily>& out, const MetricsSnapshot& s) {
    const Counters& c = s.counters;
    sample(family(out, "cqmgr_messages_activated_total", "Messages taken into the active queue",
                  MetricType::Counter),
           {}, static_cast<double>(c.messages_activated));
    auto& ended = family(out, "cqmgr_messages_ended_total",
                         "Messages that left the active queue, by where their file went",
                         MetricType::Counter);
    sample(ended, {{"end", "removed"}}, static_cast<double>(c.messages_removed));
    sample(ended, {{"end", "deferred"}}, static_cast<double>(c.messages_deferred));
    sample(ended, {{"end", "corrupt"}}, static_cast<double>(c.messages_quarantined));
    sample(family(out, "cqmgr_messages_bounced_total",
                  "Message ends that asked the bounce service for a non-delivery notice",
                  MetricType::Counter),
           {}, static_cast<double>(c.messages_bounced));
    sample(family(out, "cqmgr_messages_expired_total",
                  "Messages returned to the sender because their queue lifetime was over",
                  MetricType::Counter),
           {}, static_cast<double>(c.messages_expired));
    sample(family(out, "cqmgr_resolver_requests_total", "Resolve requests sent to trivial-rewrite",
                  MetricType::Counter),
           {}, static_cast<double>(c.resolver_requests));
    sample(family(out, "cqmgr_resolver_cache_hits_total",
                  "Resolve requests answered from the last answer", MetricType::Counter),
           {}, static_cast<double>(c.resolver_cache_hits));
    sample(family(out, "cqmgr_in_flow_tokens_written_total",
                  "In-flow tokens written to cleanup's token pipe", MetricType::Counter),
           {}, static_cast<double>(c.in_flow_tokens));
    sample(family(out, "cqmgr_active_messages", "Messages in the active queue", MetricType::Gauge),
           {}, s.active_messages);
    sample(family(out, "cqmgr_active_recipients", "Recipients in memory", MetricType::Gauge), {},
           s.active_recipients);
}

void transport_families(std::vector<MetricFamily>& out, const MetricsSnapshot& s) {
    struct Field {
        const char* name;
        const char* help;
        int MetricsSnapshot::Transport::*member;
    };
    static constexpr Field fields[] = {
        {"cqmgr_transport_window", "Sum of the concurrency windows of the live destinations",
         &MetricsSnapshot::Transport::window},
        {"cqmgr_transport_busy", "Entries being delivered", &MetricsSnapshot::Transport::busy},
        {"cqmgr_transport_todo", "Entries waiting for delivery", &MetricsSnapshot::Transport::todo},
        {"cqmgr_transport_destinations", "Destinations in memory",
         &MetricsSnapshot::Transport::destinations},
        {"cqmgr_transport_dead_destinations", "Destinations declared dead",
         &MetricsSnapshot::Transport::dead_destinations},
        {"cqmgr_transport_suspended_destinations",
         "Destinations in memory suspended by the administrator",
         &MetricsSnapshot::Transport::suspended_destinations},
        {"cqmgr_transport_throttled_destinations",
         "Destinations in memory whose concurrency the administrator has capped",
         &MetricsSnapshot::Transport::throttled_destinations},
        {"cqmgr_transport_dead", "1 while the transport is dead (its agents cannot be reached)",
         &MetricsSnapshot::Transport::dead},
        {"cqmgr_transport_suspended", "1 while the administrator has suspended the whole transport",
         &MetricsSnapshot::Transport::suspended},
    };
    for (const auto& fd : fields) {
        auto& f = family(out, fd.name, fd.help, MetricType::Gauge);
        for (const auto& t : s.transports)
            sample(f, {{"transport", t.name}}, t.*fd.member);
    }
    auto& lanes = family(out, "cqmgr_transport_lane_busy",
                         "Entries being delivered, by priority lane", MetricType::Gauge);
    for (const auto& t : s.transports)
        for (int l = 0; l < core::lane_count; ++l)
            sample(lanes, {{"transport", t.name}, {"lane", core::lane_name(core::Lane(l))}},
                   t.lane_busy[static_cast<size_t>(l)]);
}

// The administrator's settings (control socket) in force.
void control_families(std::vector<MetricFamily>& out, const MetricsSnapshot& s) {
    auto& settings = family(out, "cqmgr_control_settings",
                            "The administrator's suspensions and throttles in force, whether or "
                            "not mail in memory is covered by them",
                            MetricType::Gauge);
    sample(settings, {{"kind", "suspension"}}, s.suspensions);
    sample(settings, {{"kind", "throttle"}}, s.throttles);
}

// One destination's series, or the sum of those not shown.
struct DestinationRow {
    std::string transport;
    std::string name;
    int window = 0, busy = 0, todo = 0;
    // 0 or 1; for "other", how many of the destinations summed there are
    int dead = 0, suspended = 0, throttled = 0, share_lowered = 0;
};

// The destinations with series of their own (sorted by transport and
// name), then per transport the sum of the others, named "other".  A real
// destination named "other" is always in that sum.  Those an alert would
// ask about (dead, suspended, throttled, with a lowered share) are kept
// first.
std::vector<DestinationRow> destination_rows(const MetricsSnapshot& s, size_t limit) {
    std::vector<const MetricsSnapshot::Destination*> order;
    order.reserve(s.destinations.size());
    for (const auto& d : s.destinations)
        order.push_back(&d);
    auto rank = [](const MetricsSnapshot::Destination* d) {
        bool notable = d->dead || d->suspended || d->throttled || d->share_lowered;
        return std::make_tuple(!notable, -(d->busy + d->todo), std::cref(d->transport),
                               std::cref(d->name));
    };
    std::sort(order.begin(), order.end(), [&](auto* a, auto* b) { return rank(a) < rank(b); });
    std::vector<DestinationRow> rows;
    std::map<std::string, DestinationRow> other;
    for (size_t i = 0; i < order.size(); ++i) {
        const auto& d = *order[i];
        if (i < limit && d.name != "other") {
            rows.push_back({d.transport, d.name, d.window, d.busy, d.todo, d.dead ? 1 : 0,
                            d.suspended ? 1 : 0, d.throttled ? 1 : 0, d.share_lowered ? 1 : 0});
            continue;
        }
        auto& o = other[d.transport];
        o.transport = d.transport;
        o.name = "other";
        o.window += d.window; // 0 while dead
        o.busy += d.busy;
        o.todo += d.todo;
        o.dead += d.dead ? 1 : 0;
        o.suspended += d.suspended ? 1 : 0;
        o.throttled += d.throttled ? 1 : 0;
        o.share_lowered += d.share_lowered ? 1 : 0;
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return std::tie(a.transport, a.name) < std::tie(b.transport, b.name);
    });
    for (auto& [t, o] : other)
        rows.push_back(std::move(o));
    return rows;
}

void destination_families(std::vector<MetricFamily>& out, const MetricsSnapshot& s, size_t limit) {
    struct Field {
        const char* name;
        const char* help;
        int DestinationRow::*member;
    };
    static constexpr Field fields[] = {
        {"cqmgr_destination_window",
         "Concurrency window of the destination (0 while dead; for destination=\"other\" the "
         "sum over the destinations not shown)",
         &DestinationRow::window},
        {"cqmgr_destination_busy", "Entries being delivered to the destination",
         &DestinationRow::busy},
        {"cqmgr_destination_todo", "Entries waiting for the destination", &DestinationRow::todo},
        {"cqmgr_destination_dead",
         "1 while the destination is dead (for destination=\"other\": how many of the "
         "destinations not shown are dead)",
         &DestinationRow::dead},
        {"cqmgr_destination_suspended",
         "1 while the administrator has suspended the destination (for destination=\"other\": "
         "how many of the destinations not shown are)",
         &DestinationRow::suspended},
        {"cqmgr_destination_throttled",
         "1 while the administrator has capped the destination's concurrency (for "
         "destination=\"other\": how many of the destinations not shown are)",
         &DestinationRow::throttled},
        {"cqmgr_destination_share_lowered",
         "1 while the destination's share of its transport's agents is lowered (a slow or "
         "timing-out destination, or a probe after a death; for destination=\"other\": how many "
         "of the destinations not shown have one)",
         &DestinationRow::share_lowered},
    };
    // The families are filled side by side, row by row: made first, and
    // filled through their index (a reference into `out` would not survive
    // its growth).
    size_t first = out.size();
    for (const auto& fd : fields)
        family(out, fd.name, fd.help, MetricType::Gauge);
    for (const auto& d : destination_rows(s, limit)) {
        Labels labels{{"transport", d.transport}, {"destination", d.name}};
        for (size_t i = 0; i < std::size(fields); ++i)
            sample(out[first + i], labels, d.*fields[i].member);
    }
}

// One histogram family with a series per transport.
void histogram_family(std::vector<MetricFamily>& out, std::string name, std::string help,
                      const std::map<std::string, Histogram>& by_transport,
                      std::span<const double> bounds) {
    auto& f = family(out, std::move(name), std::move(help), MetricType::Histogram);
    for (const auto& [t, h] : by_transport)
        sample(f, {{"transport", t}}, h, bounds);
}

void histogram_families(std::vector<MetricFamily>& out, const Counters& c) {
    histogram_family(out, "cqmgr_queue_delay_seconds",
                     "Time from a message's arrival to the end of a delivery request in which "
                     "all its recipients finished",
                     c.queue_delay, queue_delay_bounds);
    histogram_family(out, "cqmgr_delivery_duration_seconds",
                     "Time a delivery request took, from handing it to the agent to its outcome",
                     c.delivery_time, delivery_time_bounds);
}

// How late the heartbeat's timer fired (health.hpp).
void loop_families(std::vector<MetricFamily>& out, const MetricsSnapshot& s) {
    sample(family(out, "cqmgr_event_loop_lag_seconds",
                  "How late the event loop ran its once-a-second timer", MetricType::Histogram),
           {}, s.loop_lag, loop_lag_bounds);
}
} // namespace

MetricsSnapshot take_metrics_snapshot(const core::Scheduler& sched, const Counters& counters,
                                      int active_messages, const Providers* providers,
                                      size_t provider_limit) {
    MetricsSnapshot s;
    s.counters = counters;
    s.active_messages = active_messages;
    s.active_recipients = sched.recipient_count();
    s.destinations.reserve(static_cast<size_t>(sched.queue_count()));
    for (const auto& [name, t] : sched.transports()) {
        MetricsSnapshot::Transport ts;
        ts.name = name;
        ts.dead = t->dead ? 1 : 0;
        ts.suspended = t->hold ? 1 : 0;
        for (int l = 0; l < core::lane_count; ++l)
            ts.lane_busy[static_cast<size_t>(l)] = t->lane_busy[l];
        for (const core::Queue& q : t->queues_rr) {
            ts.destinations++;
            ts.dead_destinations += q.dead();
            ts.suspended_destinations += q.limits.hold.has_value();
            ts.throttled_destinations += q.limits.cap.has_value();
            ts.window += q.window;
            ts.busy += q.busy_count();
            ts.todo += q.todo_count();
            bool lowered = !sched.limits().shares().empty() &&
                           sched.limits().shares().contains(core::AdminTarget{name, q.name});
            s.destinations.push_back({name, q.name, q.window, q.busy_count(), q.todo_count(),
                                      q.dead(), q.limits.hold.has_value(), q.limits.cap.has_value(),
                                      lowered});
        }
        s.transports.push_back(std::move(ts));
    }
    s.suspensions = static_cast<int>(sched.limits().holds().size());
    s.throttles = static_cast<int>(sched.limits().caps().size());
    if (providers) s.providers = provider_rows(sched, *providers, provider_limit);
    return s;
}

std::vector<prometheus::MetricFamily> build_metrics(const MetricsSnapshot& s,
                                                    size_t destination_limit) {
    std::vector<MetricFamily> out;
    delivery_families(out, s.counters);
    message_families(out, s);
    queue_families(out, s);
    transport_families(out, s);
    control_families(out, s);
    destination_families(out, s, destination_limit);
    provider_families(out, s);
    if (s.mx) mx_families(out, *s.mx);
    feature_families(out, s.features);
    histogram_families(out, s.counters);
    loop_families(out, s);
    return out;
}

} // namespace cqmgr::qmgr
