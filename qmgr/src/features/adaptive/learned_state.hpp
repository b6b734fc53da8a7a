// The adaptive limits' learned limits in the destination state store:
// each change is kept in the destination's record, with the reply that
// taught it, and at start-up a stored limit is offered back to the
// adaptive limits, with its reply if its class is still one they know.
#pragma once

#include "adaptive.hpp"
#include "clock.hpp"
#include "destination_state.hpp"

namespace cqmgr::qmgr {

// Has `state` keep every change of a learned limit `adaptive` makes.
void keep_learned(AdaptiveLimits& adaptive, DestinationState& state);
// What DestinationState::restore() offers the stored learned limits to
// (nothing without adaptive limits).
DestinationState::LearnedRestore restore_learned(AdaptiveLimits* adaptive, const WallClock& clock);

} // namespace cqmgr::qmgr
