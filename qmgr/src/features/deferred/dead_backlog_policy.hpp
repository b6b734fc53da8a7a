// The dead backlog's one decision (cqmgr_dead_backlog): whether a due
// deferred file is taken into the active queue, as stock takes it, or
// waits another backoff in deferred without being read.
//
// Waiting is only for what taking would not change: a message cqmgr
// deferred itself (so its destinations and times are known without
// reading it), not asked for explicitly, whose destinations are all dead
// now, and which its attempt would neither expire nor warn about.  The
// attempt is judged a few seconds ahead (attempt_allowance): stock decides
// expiry and delay warnings when an attempt ends, not when it begins, so a
// message within those seconds of either is taken.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "deferred_index.hpp"

#include <cstdint>

namespace cqmgr::qmgr {

enum class BacklogChoice { take, postpone };

// What is known of a due deferred file when the scan reaches it.
struct BacklogCase {
    const DeferredIndex::Times* times = nullptr; // nullptr: not in the index
    bool explicit_request = false;               // an A or F scan, or g+r / g+x on the file
    int destinations = 0;                        // its destinations in the index
    int dead = 0;                                // of those, dead now
};

// Seconds ahead at which an attempt's end is judged.
inline constexpr int64_t attempt_allowance = 10;

// Take or postpone, at time `now`.
BacklogChoice backlog_choice(const BacklogCase& c, int64_t now, const conf::QmgrParams& p);

} // namespace cqmgr::qmgr
