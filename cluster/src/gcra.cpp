// The generic cell-rate algorithm (see gcra.hpp).
#include "cqmgr/cluster/gcra.hpp"

#include <algorithm>

namespace cqmgr::cluster {

GcraResult gcra_take(double& tat, double now, const RateSpec& rate, double horizon_ms) {
    const double interval = rate.interval_ms();
    const double base = std::max(tat, now);
    // The earliest time at which one more start fits in the burst
    // allowance (written so that a start at exactly TAT is never refused
    // by rounding).
    const double allow_at = base - interval * static_cast<double>(rate.burst - 1);
    const double wait = allow_at - now;
    if (wait > std::max(horizon_ms, 0.0)) return {false, wait - std::max(horizon_ms, 0.0), 0};
    tat = base + interval;
    return {true, 0, std::max(wait, 0.0)};
}

double gcra_booking_horizon_ms(const RateSpec& rate) {
    return std::max(1000.0, rate.interval_ms());
}

} // namespace cqmgr::cluster
