// A message in the active queue: its envelope, when it became active, how
// many of its entries are still out, and whether any recipient must be tried
// again (the "flags" that decide between removal and the deferred queue).
#pragma once

#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/queuefile/envelope.hpp"

#include <string>

namespace cqmgr::qmgr {

struct Message {
    std::string id;
    queuefile::Envelope env;
    protocol::TimeVal active_arrival;
    // Entries (and recipients still being resolved) not yet finished.
    int refcount = 0;
    // Nonzero when some recipient needs another attempt.
    int flags = 0;
    bool force_expire = false; // g+x on the queue file (postsuper -e)
    bool unthrottle = false;   // g+r on the queue file (postqueue -i)
    bool from_incoming = false;
    bool resolving = true;     // recipients are still being resolved
};

} // namespace cqmgr::qmgr
