// Lets tests reach the scheduler's units (qmgr/core/src) behind the
// driver's API, to build states that workloads do not produce and to test
// one unit at a time.
#pragma once

#include "core.hpp"

namespace cqmgr::core {

struct SchedulerAccess {
    static Core& core(Scheduler& s) { return *s.c_; }
};

} // namespace cqmgr::core
