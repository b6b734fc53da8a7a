#include "top_view.hpp"

#include "fields.hpp"
#include "format.hpp"
#include "table.hpp"

#include <algorithm>
#include <initializer_list>

namespace cqmgr::ctl {

namespace {

// Sums the named counters of a summary's counters.deliveries; nullopt when
// one is missing.
std::optional<double> delivery_sum(const json& summary, std::initializer_list<const char*> keys) {
    const json& d = object_of(object_of(summary, "counters"), "deliveries");
    double sum = 0;
    for (const char* k : keys) {
        auto n = number_of(d, k);
        if (!n) return std::nullopt;
        sum += *n;
    }
    return sum;
}

// `lines` cut to `budget` lines, the last one then saying how many are left
// out.
std::vector<std::string> cut(std::vector<std::string> lines, size_t budget) {
    if (lines.size() <= budget) return lines;
    if (budget == 0) return {};
    const size_t shown = budget - 1;
    const size_t hidden = lines.size() - shown;
    lines.resize(shown);
    lines.push_back("... " + std::to_string(hidden) + " more");
    return lines;
}

// The four header lines.
std::vector<std::string> header(const TopInput& in) {
    std::string first = "cqmgrctl top - " + format_time(in.now).substr(11) + " - " + in.socket;
    if (!in.summary) return {first, "waiting for cqmgr...", "", ""};
    const json& s = *in.summary;
    first += " - " + string_of(s, "version", "cqmgr") + " pid " + count_of(s, "pid");
    if (auto up = number_of(s, "uptime")) first += " up " + format_seconds(*up);

    const json& active = object_of(s, "active");
    std::string second = "active: " + count_of(active, "messages") + " messages, " +
                         count_of(active, "recipients") + " recipients";
    if (auto oldest = number_of(active, "oldest_age"))
        second += ", oldest " + format_seconds(*oldest);
    second += "; " + count_of(s, "deliveries_in_flight") + " deliveries in flight; " +
              count_of(s, "transports") + " transports, " + count_of(s, "queues") + " queues";

    const json& counters = object_of(s, "counters");
    std::string third =
        "deliveries/s " + (in.rates ? format_rate(in.rates->deliveries) : "-") + "  deferrals/s " +
        (in.rates ? format_rate(in.rates->deferrals) : "-") +
        "  since start: " + counter_list(object_of(counters, "deliveries"), delivery_counters);
    std::string fourth = "feed: " + feed_state(object_of(s, "feed")) + "; messages: " +
                         counter_list(object_of(counters, "messages"), message_counters);
    return {first, second, third, fourth};
}

} // namespace

std::optional<TopRates> top_rates(const json& previous, const json& current, double elapsed) {
    auto prev_up = number_of(previous, "uptime");
    auto cur_up = number_of(current, "uptime");
    double dt = elapsed;
    if (prev_up && cur_up) {
        if (*cur_up < *prev_up) return std::nullopt; // another daemon
        if (*cur_up > *prev_up) dt = *cur_up - *prev_up;
    }
    if (dt <= 0) return std::nullopt;
    auto all = {"done", "deferred", "crashed", "unavailable"};
    auto failed = {"deferred", "crashed", "unavailable"};
    auto d0 = delivery_sum(previous, all), d1 = delivery_sum(current, all);
    auto f0 = delivery_sum(previous, failed), f1 = delivery_sum(current, failed);
    if (!d0 || !d1 || !f0 || !f1 || *d1 < *d0 || *f1 < *f0) return std::nullopt;
    return TopRates{(*d1 - *d0) / dt, (*f1 - *f0) / dt};
}

std::vector<std::string> render_top(const TopInput& in) {
    const size_t rows = static_cast<size_t>(std::max(in.rows, 1));
    const size_t cols = static_cast<size_t>(std::max(in.cols, 1));
    std::vector<std::string> frame = header(in);
    frame.push_back(in.status);

    if (in.queues) {
        std::vector<QueueRow> busiest;
        for (auto& row : queue_rows(*in.queues, false))
            if (row.load > 0) busiest.push_back(row);
        std::stable_sort(busiest.begin(), busiest.end(),
                         [](const QueueRow& a, const QueueRow& b) { return a.load > b.load; });
        std::vector<std::string> busy_block =
            busiest.empty() ? std::vector<std::string>{"no mail waiting for a destination"}
                            : queue_table(busiest).lines();
        Table conditions = condition_table(*in.queues, in.now, false);
        std::vector<std::string> cond_lines =
            conditions.empty() ? std::vector<std::string>{} : conditions.lines();

        // The busiest destinations get what the dead and suspended ones
        // leave, but those get at most half the screen when both are long.
        const size_t avail = rows > frame.size() ? rows - frame.size() : 0;
        const size_t cond_want = cond_lines.empty() ? 0 : cond_lines.size() + 2;
        size_t cond_give = cond_want;
        if (busy_block.size() + cond_want > avail)
            cond_give = std::min(cond_want,
                                 std::max(avail / 2, avail - std::min(avail, busy_block.size())));
        const size_t busy_give = avail - std::min(avail, cond_give);

        for (auto& line : cut(busy_block, busy_give))
            frame.push_back(line);
        if (cond_give >= 3) {
            frame.push_back("");
            frame.push_back("DEAD OR SUSPENDED");
            for (auto& line : cut(cond_lines, cond_give - 2))
                frame.push_back(line);
        }
    }

    if (frame.size() > rows) frame.resize(rows);
    for (auto& line : frame)
        line = fit_width(line, cols);
    return frame;
}

} // namespace cqmgr::ctl
