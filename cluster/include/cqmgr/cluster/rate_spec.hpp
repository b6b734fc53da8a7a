// The values of cqmgr_rate_limits and cqmgr_cluster_concurrency_limits.
//
// A rate is written as KumoMTA writes its throttles: `N/period[,burst]`,
// where period is a unit with an optional count in front (`ms`, `s`,
// `sec`, `second`, `m`, `min`, `minute`, `h`, `hr`, `hour`, `d`, `day`;
// `50/s`, `3000/min,100`, `10/500ms`, `200/2h`), and burst (also written
// `max_burst=B`) is how many may go at once after a quiet spell; it
// defaults to N.  A concurrency limit is a count of 1 or more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::cluster {

struct RateSpec {
    int64_t count = 0;     // N, >= 1
    int64_t period_ms = 0; // >= 1
    int64_t burst = 0;     // >= 1

    // The spacing between two starts at the steady rate, in milliseconds.
    double interval_ms() const {
        return static_cast<double>(period_ms) / static_cast<double>(count);
    }
    // As an administrator would write it back, e.g. "3000/60000ms,100".
    std::string text() const;
    bool operator==(const RateSpec&) const = default;
};

// Parses a rate; nullopt (and `error` set) when `text` is not one.
std::optional<RateSpec> parse_rate(std::string_view text, std::string* error = nullptr);

// Parses a concurrency limit (a decimal count >= 1).
std::optional<int> parse_concurrency(std::string_view text, std::string* error = nullptr);

} // namespace cqmgr::cluster
