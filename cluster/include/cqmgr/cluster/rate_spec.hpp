// The values of cqmgr_rate_limits and cqmgr_cluster_concurrency_limits.
//
// A rate is written as KumoMTA writes its throttles: `N/period[,burst]`,
// where period is a unit with an optional count in front (`ms`, `s`,
// `sec`, `second`, `m`, `min`, `minute`, `h`, `hr`, `hour`, `d`, `day`;
// `50/s`, `3000/min,100`, `10/500ms`, `200/2h`), and burst (also written
// `max_burst=B`) is how many may go at once after a quiet spell; it
// defaults to N.  A concurrency limit is a count of 1 or more.
#pragma once

#include "cqmgr/common/result.hpp"

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
    // The steady rate in starts a second (what explain shows).
    double per_second() const {
        return static_cast<double>(count) * 1000.0 / static_cast<double>(period_ms);
    }
    // As an administrator would write it back, e.g. "3000/60000ms,100".
    std::string text() const;
    bool operator==(const RateSpec&) const = default;
};

// Why a table's value is not a limit.
struct LimitError {
    enum class Kind {
        rate_form,   // no N/period
        rate_count,  // N is not a count of 1 or more
        rate_period, // the period's count is not one
        rate_unit,   // an unknown period unit
        rate_burst,  // a burst that is not a count of 1 or more
        concurrency, // a concurrency that is not a count of 1 to 1,000,000
    };
    Kind kind = Kind::rate_form;
    std::string value; // the value as written

    // "rate \"50/fortnight\": unknown period unit", for the warning.
    std::string message() const;
};

// Parses a rate.  A period longer than 2^40 ms (about 34 years) is refused
// as a bad period.
Result<RateSpec, LimitError> parse_rate(std::string_view text);

// Parses a concurrency limit (a decimal count >= 1).
Result<int, LimitError> parse_concurrency(std::string_view text);

} // namespace cqmgr::cluster
