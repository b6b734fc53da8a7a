// A queue's concurrency window under Postfix 2.5's feedback: how a
// delivery that went through grows it and a failed one shrinks it, and
// when a destination has failed a whole pseudo-cohort.  Pure arithmetic on
// the queue; the driver hears each step (destination_concurrency_
// feedback_debug).  Queues decides what follows (a death, a revival).
#pragma once

#include "driver_calls.hpp"

namespace cqmgr::core {

// Positive feedback on live queue `q`: the window grows by the transport's
// positive feedback, but only while it is near what is really in use, so
// that negative feedback is not outrun, and never past the transport's
// destination concurrency limit.
void window_grow(Queue& q, DriverCalls& driver);
// Negative feedback on ready queue `q`: one more failed pseudo-cohort
// (1/window); at the transport's fail_cohort_limit the window drops to 0
// (dead), else it shrinks by the negative feedback, to no less than 1.
void window_shrink(Queue& q, DriverCalls& driver);

} // namespace cqmgr::core
