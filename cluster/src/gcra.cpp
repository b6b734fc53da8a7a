// The generic cell-rate algorithm (see gcra.hpp).
#include "cqmgr/cluster/gcra.hpp"

#include <algorithm>

namespace cqmgr::cluster {

GcraResult gcra_take(double& tat, double now, const RateSpec& rate) {
    const double interval = rate.interval_ms();
    const double base = std::max(tat, now);
    // The earliest time at which one more start fits in the burst
    // allowance (written so that a start at exactly TAT is never refused
    // by rounding).
    const double allow_at = base - interval * static_cast<double>(rate.burst - 1);
    if (now < allow_at) return {false, allow_at - now};
    tat = base + interval;
    return {true, 0};
}

} // namespace cqmgr::cluster
