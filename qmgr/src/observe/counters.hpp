// What the daemon has done since it started, counted where it happens and
// read by the control socket's `summary`, the Prometheus metrics and the
// USDT-free parts of the admin tools.  Plain numbers, updated on the event
// loop thread only.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

// Observations sorted into fixed buckets, Prometheus-style: `buckets[i]`
// counts the values no larger than bounds[i] and larger than bounds[i-1];
// the last element counts those above every bound.
struct Histogram {
    std::vector<uint64_t> buckets;
    double sum = 0;
    uint64_t count = 0;

    void observe(std::span<const double> bounds, double value) {
        if (buckets.empty()) buckets.assign(bounds.size() + 1, 0);
        size_t i = 0;
        while (i < bounds.size() && value > bounds[i])
            ++i;
        ++buckets[i];
        sum += value;
        ++count;
    }
};

// Upper bounds (seconds) of the queue delay histogram: from a fraction of a
// second for mail that goes straight through to the default five-day
// maximal_queue_lifetime.
inline constexpr std::array<double, 16> queue_delay_bounds{
    0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 86400, 2 * 86400, 5 * 86400};
// Upper bounds (seconds) of the delivery request time histogram: a local
// delivery takes milliseconds, a slow SMTP peer minutes.
inline constexpr std::array<double, 14> delivery_time_bounds{
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};

struct Counters {
    // Delivery requests per transport, by the agent's answer (done: every
    // recipient delivered or bounced; deferred: some must be tried again;
    // crashed: no valid reply; unavailable: the request never reached an
    // agent; in this order) and by the class of the hop status (the first
    // digit, 0 = none).  An agent sets a hop status only when the
    // destination itself failed.  The control socket's summary and the
    // metrics both read their totals from here.
    std::map<std::string, std::array<std::array<uint64_t, 6>, 4>> deliveries_by_class;
    // Message ends.  `removed`, `deferred` and `quarantined` are where the
    // file went (each message that leaves active counts once); `bounced`
    // (a non-delivery notice was asked for) and `expired` (returned to the
    // sender) are counted besides.
    uint64_t messages_removed = 0;
    uint64_t messages_deferred = 0;
    uint64_t messages_bounced = 0;
    uint64_t messages_expired = 0;
    uint64_t messages_quarantined = 0;
    // Messages taken into the active queue.
    uint64_t messages_activated = 0;
    // Resolver requests sent and answered from a cache.
    uint64_t resolver_requests = 0;
    uint64_t resolver_cache_hits = 0;
    // In-flow tokens written to master.
    uint64_t in_flow_tokens = 0;
    // Per transport: seconds from a message's arrival to the reply of a
    // request whose recipients all finished (status 0), and seconds each
    // delivery request took from the entry's selection to the outcome.
    std::map<std::string, Histogram> queue_delay;
    std::map<std::string, Histogram> delivery_time;

    // How a delivery request ended, for count_delivery().
    enum class Result { done, deferred, crashed, unavailable };
    // Counts one delivery request of `transport`; `dsn` is the hop status
    // ("" when none), `seconds` the request's time and `queue_delay` the
    // message's time since arrival (used only for `done`).
    void count_delivery(const std::string& transport, Result result, std::string_view dsn,
                        double seconds, double queue_delay_seconds) {
        size_t cls = !dsn.empty() && dsn[0] >= '1' && dsn[0] <= '5' ? size_t(dsn[0] - '0') : 0;
        if (!last_.classes || last_.name != transport) {
            last_.name = transport;
            last_.classes = &deliveries_by_class[transport];
            last_.time = &delivery_time[transport];
            last_.delay = nullptr;
        }
        (*last_.classes)[static_cast<size_t>(result)][cls]++;
        last_.time->observe(delivery_time_bounds, seconds);
        if (result == Result::done) {
            // Made at the first delivery done, as the metrics show it.
            if (!last_.delay) last_.delay = &queue_delay[transport];
            last_.delay->observe(queue_delay_bounds, queue_delay_seconds);
        }
    }

  private:
    // The last transport counted and where its counters are: deliveries
    // come in runs of one transport, and three lookups by name were a
    // tenth of a delivery's bookkeeping.  A copy starts without it (its
    // pointers would lead into the original).
    struct Last {
        Last() = default;
        Last(const Last&) {}
        Last& operator=(const Last&) {
            classes = nullptr;
            return *this;
        }
        std::string name;
        std::array<std::array<uint64_t, 6>, 4>* classes = nullptr;
        Histogram* time = nullptr;
        Histogram* delay = nullptr;
    } last_;
};

} // namespace cqmgr::qmgr
