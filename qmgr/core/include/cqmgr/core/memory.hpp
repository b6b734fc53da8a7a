// What the daemon remembers about a destination from an earlier run, for
// the scheduler to start its queue with (Scheduler::queue_remember).
#pragma once

#include <cstdint>

namespace cqmgr::core {

struct QueueMemory {
    int window = 0;        // the last concurrency window; 0 = unknown
    int64_t last_done = 0; // when its last delivery ended; 0 = none
};

} // namespace cqmgr::core
