// The defer-log records of one delivery: what an agent that deferred
// recipients one by one (its reply then has no text) had the defer service
// append to the message's defer log, for the recipients of the entry it
// was given, from where the log ended when the request was sent.  The
// adaptive limits and the reply rules that act read the receiver's words
// there.
#pragma once

#include "cqmgr/core/scheduler.hpp"
#include "defer_log.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

// The records for entry `e`'s recipients in the defer log at `path` after
// `mark` (other deliveries of the message may have written in between),
// read up to a bound (a few hundred bytes a recipient).
std::vector<DeferRecord> entry_records(const core::Entry& e, const std::string& path, int64_t mark);

} // namespace cqmgr::qmgr
