#include "cqmgr/conf/feedback.hpp"

#include <climits>
#include <cmath>
#include <cstdio>
#include <string>
#include <strings.h>

namespace cqmgr::conf {

namespace {
// True when lo <= v <= hi (false for NaN).
bool within(double v, double lo, double hi) {
    return v >= lo && v <= hi;
}
} // namespace

double Feedback::at(int window) const {
    if (!per_concurrency) return base;
    if (window < 1) window = 1;
    return sqrt ? base / std::sqrt(static_cast<double>(window)) : base / window;
}

std::optional<Feedback> parse_feedback(std::string_view value, bool allow_sqrt) {
    // Use the C library's scanner so that numbers ("0.5", "1e-1", "inf"),
    // white space and trailing junk are treated exactly as qmgr treats them.
    std::string s(value.substr(0, value.find('\0')));
    double numerator = 0;
    char slash[2] = {};
    char denominator[31] = {};
    char junk = 0;
    Feedback fb;
    double base = -1; // "not understood"
    switch (std::sscanf(s.c_str(), "%lf %1[/] %30s%c", &numerator, slash, denominator, &junk)) {
    case 1: // a number, possibly followed by text that is not a '/'
        base = numerator;
        break;
    case 3: { // number / word-or-number, nothing after it
        double d = 0;
        if (strcasecmp(denominator, "concurrency") == 0) {
            fb.per_concurrency = true;
            base = numerator;
        } else if (allow_sqrt && strcasecmp(denominator, "sqrt_concurrency") == 0) {
            fb.per_concurrency = fb.sqrt = true;
            base = numerator;
        } else if (within(numerator, 0, INT_MAX) &&
                   std::sscanf(denominator, "%lf%c", &d, &junk) == 1 &&
                   within(d, 1.0 / INT_MAX, INT_MAX)) {
            base = numerator / d;
        }
        break;
    }
    default:
        break;
    }
    if (!within(base, 0, 1)) return std::nullopt;
    fb.base = base;
    return fb;
}

} // namespace cqmgr::conf
