// What the adaptive limits learn for a provider (their provider scope)
// becomes a bound of the providers' gates (ClusterLimits with the
// providers' scoping): kept for the members born from now on, and each
// member there now is scoped again, so that its gate counts the provider's
// deliveries in flight against the learned limit at once.
#pragma once

#include "cluster_limits.hpp"
#include "cqmgr/core/learned.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "providers.hpp"

#include <string>

namespace cqmgr::qmgr {

// Hands `limit` (nothing learned: !any()), learned for `provider`'s
// members on `transport`, to `gates`.  Not from inside a scheduler
// callback.
void learned_to_provider_gates(ClusterLimits& gates, const Providers& providers,
                               core::Scheduler& sched, const std::string& transport,
                               const std::string& provider, const core::LearnedLimit& limit);

} // namespace cqmgr::qmgr
