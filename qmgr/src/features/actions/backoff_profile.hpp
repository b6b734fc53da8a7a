// A backoff profile: the second, lower limit set that a reply rule's
// `backoff PROFILE` action puts on its scope (reply_action.hpp).  The admin
// names profiles in cqmgr_backoff_profiles (backoff_profiles.hpp); a
// profile's value is
//
//   [concurrency=N] [rate=N/PERIOD]
//
// in any order, at least one, keywords in any case: at most N deliveries at
// once, and a pause of PERIOD/N after each delivery (as `rate N/PERIOD`
// does: whole seconds, one delivery at a time while it applies).  The rate
// is written as in cqmgr_rate_limits, without a burst (a pause has none).
// Pure, for the daemon and the fuzzer (qmgr/fuzz/fuzz_reply_action.cpp).
#pragma once

#include "cqmgr/common/result.hpp"
#include "reply_action.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

struct BackoffProfile {
    int concurrency = 0;    // 0: no cap
    int64_t rate_count = 0; // 0: no rate
    int64_t rate_period_ms = 0;
    bool operator==(const BackoffProfile&) const = default;
};

// The longest profile value read.
inline constexpr size_t max_profile_text = 256;

// Parses one table value; an error says why it is none ("unknown word
// \"fast\"").
Result<BackoffProfile, ActionError> parse_backoff_profile(std::string_view value);

// `a` (a backoff) with the limits of profile `p`.
ReplyAction with_profile(ReplyAction a, const BackoffProfile& p);

// The profile as the admin would write it back, with the period in
// milliseconds ("concurrency=2 rate=30/60000ms"); parsing it gives the
// profile again.
std::string backoff_profile_text(const BackoffProfile& p);

} // namespace cqmgr::qmgr
