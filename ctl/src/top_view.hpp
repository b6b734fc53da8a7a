// One frame of `cqmgrctl top`, as a pure function of the replies: a header
// with the totals and the delivery and deferral rates, the busiest
// destinations (by busy + todo) with window, busy and todo, and the dead or
// suspended transports and destinations with their reasons.  Every line
// fits `cols`; the frame has at most `rows` lines.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::ctl {

using nlohmann::json;

// Delivery requests finished per second, and those of them that left mail
// deferred (the agent deferred some recipients, crashed, or was never
// reached).
struct TopRates {
    double deliveries = 0;
    double deferrals = 0;
};

// The rates between two `summary` replies.  The interval is the daemon's
// uptime difference (the time the counters really span), or `elapsed`
// (the client's own clock) when the replies have no usable uptime.
// nullopt when the counters went backwards (a new daemon) or no time passed.
std::optional<TopRates> top_rates(const json& previous, const json& current, double elapsed);

struct TopInput {
    const json* summary = nullptr; // the last summary reply (nullptr: none yet)
    const json* queues = nullptr;  // the last queues reply
    std::optional<TopRates> rates;
    std::string socket;  // shown in the header
    std::string status;  // a problem to show (connection lost...), or empty
    double interval = 1; // seconds between polls
    int64_t now = 0;     // Unix seconds
    int cols = 80;
    int rows = 24;
};

std::vector<std::string> render_top(const TopInput& in);

} // namespace cqmgr::ctl
