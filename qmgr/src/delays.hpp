// The "delay=D, delays=a/b/c/d" part of a delivery log line, formatted as
// Postfix formats it, for the recipients qmgr itself defers.
#pragma once

#include "cqmgr/protocol/messages.hpp"

#include <cstdint>
#include <string>

namespace cqmgr::qmgr {

// Formats seconds with two significant digits as Postfix's format_tv does
// (whole seconds from 10 s, tenths from 1 s, else hundredths).
std::string format_seconds(double seconds);

// "delay=..., delays=a/b/0/0" for a recipient handled inside qmgr now.
std::string delay_text(int64_t arrival_sec, int64_t arrival_usec, const protocol::TimeVal& active);

} // namespace cqmgr::qmgr
