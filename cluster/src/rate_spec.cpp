// Parsing the limit values of the lookup tables (see rate_spec.hpp).
#include "cqmgr/cluster/rate_spec.hpp"

#include <array>
#include <charconv>
#include <utility>

namespace cqmgr::cluster {

namespace {

// Removes leading and trailing blanks.
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// A decimal number >= 1 that fills all of `s` (and stays far from overflow).
std::optional<int64_t> positive(std::string_view s) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v < 1 || v > (int64_t{1} << 40))
        return std::nullopt;
    return v;
}

// The longest period, 2^40 ms (about 34 years), bounded as the counts are:
// far from overflow even in nanoseconds.
constexpr int64_t max_period_ms = int64_t{1} << 40;

// The length of a period unit in milliseconds.
std::optional<int64_t> unit_ms(std::string_view unit) {
    static constexpr std::array<std::pair<std::string_view, int64_t>, 14> units{{
        {"ms", 1},
        {"s", 1000},
        {"sec", 1000},
        {"second", 1000},
        {"m", 60'000},
        {"min", 60'000},
        {"minute", 60'000},
        {"h", 3'600'000},
        {"hr", 3'600'000},
        {"hour", 3'600'000},
        {"d", 86'400'000},
        {"day", 86'400'000},
        {"seconds", 1000},
        {"minutes", 60'000},
    }};
    for (const auto& [name, ms] : units)
        if (name == unit) return ms;
    return std::nullopt;
}

// The failure of kind `kind` for `text`.
Failure<LimitError> fail(LimitError::Kind kind, std::string_view text) {
    return Failure{LimitError{kind, std::string(text)}};
}

} // namespace

std::string RateSpec::text() const {
    return std::to_string(count) + "/" + std::to_string(period_ms) + "ms," + std::to_string(burst);
}

std::string LimitError::message() const {
    switch (kind) {
    case Kind::rate_form:
        return "rate \"" + value + "\": expected N/period[,burst]";
    case Kind::rate_count:
        return "rate \"" + value + "\": bad count";
    case Kind::rate_period:
        return "rate \"" + value + "\": bad period";
    case Kind::rate_unit:
        return "rate \"" + value + "\": unknown period unit";
    case Kind::rate_burst:
        return "rate \"" + value + "\": bad burst";
    case Kind::concurrency:
        return "concurrency \"" + value + "\": expected a count of 1 or more";
    }
    return value;
}

Result<RateSpec, LimitError> parse_rate(std::string_view text) {
    using Kind = LimitError::Kind;
    std::string_view s = trim(text);
    RateSpec r;
    auto slash = s.find('/');
    if (slash == std::string_view::npos) return fail(Kind::rate_form, text);
    auto n = positive(trim(s.substr(0, slash)));
    if (!n) return fail(Kind::rate_count, text);
    r.count = *n;
    std::string_view rest = s.substr(slash + 1);
    std::string_view burst;
    if (auto comma = rest.find(','); comma != std::string_view::npos) {
        burst = trim(rest.substr(comma + 1));
        rest = rest.substr(0, comma);
        if (burst.starts_with("max_burst=")) burst.remove_prefix(10);
    }
    rest = trim(rest);
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
        digits++;
    int64_t multiple = 1;
    if (digits > 0) {
        auto m = positive(rest.substr(0, digits));
        if (!m) return fail(Kind::rate_period, text);
        multiple = *m;
    }
    auto unit = unit_ms(trim(rest.substr(digits)));
    if (!unit) return fail(Kind::rate_unit, text);
    // A period beyond the longest one (checked before multiplying, which
    // would overflow) is bad configuration.
    if (multiple > max_period_ms / *unit) return fail(Kind::rate_period, text);
    r.period_ms = multiple * *unit;
    r.burst = r.count;
    if (!burst.empty() || s.find(',') != std::string_view::npos) {
        auto b = positive(burst);
        if (!b) return fail(Kind::rate_burst, text);
        r.burst = *b;
    }
    return r;
}

Result<int, LimitError> parse_concurrency(std::string_view text) {
    auto n = positive(trim(text));
    if (!n || *n > 1'000'000) return fail(LimitError::Kind::concurrency, text);
    return static_cast<int>(*n);
}

} // namespace cqmgr::cluster
