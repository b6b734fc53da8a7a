// The words explain uses for times and for an administrator's settings,
// shared by its reply and its limit sources.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <cstdint>
#include <string>

namespace cqmgr::qmgr {

// "2026-11-24T06:00:00Z (in 300s)", or "... (300s ago)".
std::string when_text(int64_t t, int64_t now);

// " until T", or `open` when it ends only when an administrator ends it.
std::string until_words(int64_t until, int64_t now, const std::string& open);

// Who set an administrator's setting, and when, if known.
std::string set_by(int64_t uid, int64_t since, int64_t now);

// A suspension of `target` in words.
std::string hold_text(const std::string& target, const core::AdminHold& h, int64_t now);

// A throttle of `target` in words.
std::string cap_text(const std::string& target, const core::AdminCap& c, int64_t now);

} // namespace cqmgr::qmgr
