#include "explain_limits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cqmgr::qmgr {

const char* bound_name(LimitLine::Bound b) {
    switch (b) {
    case LimitLine::Bound::stop:
        return "stop";
    case LimitLine::Bound::concurrency:
        return "concurrency";
    case LimitLine::Bound::rate:
        return "rate";
    }
    return "unknown";
}

EffectiveLimits bind_limits(std::vector<LimitLine>& lines, int unbounded) {
    EffectiveLimits e;
    std::optional<double> concurrency;
    for (size_t i = 0; i < lines.size(); ++i) {
        LimitLine& l = lines[i];
        l.binds = false;
        if (!l.in_force) continue;
        // A stop is a concurrency of none, whatever its value says.
        double v = l.bound == LimitLine::Bound::stop ? 0 : l.value;
        // Strictly smaller: among equals the first listed binds.
        if (l.bound == LimitLine::Bound::rate) {
            if (!e.rate || v < *e.rate) e.rate = v, e.rate_line = i;
        } else if (!concurrency || v < *concurrency) {
            concurrency = v, e.concurrency_line = i;
        }
    }
    e.concurrency =
        concurrency ? static_cast<int>(std::max(0.0, std::floor(*concurrency))) : unbounded;
    if (e.concurrency_line) lines[*e.concurrency_line].binds = true;
    if (e.rate_line) lines[*e.rate_line].binds = true;
    return e;
}

std::string rate_text(double per_second) {
    char buf[48];
    if (per_second <= 0) return "0/s";
    // Slower than one a second reads best as one per so many seconds.
    double every = 1.0 / per_second;
    if (per_second < 1 && std::fabs(every - std::round(every)) < 1e-6)
        std::snprintf(buf, sizeof buf, "1/%.0fs", std::round(every));
    else if (std::fabs(per_second - std::round(per_second)) < 1e-6)
        std::snprintf(buf, sizeof buf, "%.0f/s", std::round(per_second));
    else
        std::snprintf(buf, sizeof buf, "%.3g/s", per_second);
    return buf;
}

} // namespace cqmgr::qmgr
