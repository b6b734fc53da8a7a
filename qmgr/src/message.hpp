// A message in the active queue: the scheduler's view (core::Message) plus
// what the daemon keeps: the envelope, when it became active, and the state
// of its recipient reading.
#pragma once

#include "cqmgr/core/structures.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/queuefile/envelope.hpp"

#include <string>

namespace cqmgr::qmgr {

struct Message : core::Message {
    queuefile::Envelope env;
    protocol::TimeVal active_arrival;
    bool force_expire = false; // g+x on the queue file (postsuper -e)
    bool unthrottle = false;   // g+r on the queue file (postqueue -i)
    int scan_flags = 0;        // flags of the scan that brought it in
    bool reading = false;      // a recipient batch is being read and resolved
    bool finishing = false;    // the end-of-message work is under way
    int io_pending = 0;        // driver-side deferral records still being written
};

} // namespace cqmgr::qmgr
