// The lines stock qmgr logs with destination_concurrency_feedback_debug =
// yes: each transport's feedback settings when it is first seen, and each
// destination's feedback step and window after every success or failure
// report (not for the retry and error transports).
#pragma once

#include "cqmgr/core/structures.hpp"

#include <string>

namespace cqmgr::qmgr {

// "<transport>: <param> feedback type N value at W: X"; `param` is the
// parameter name as stock shows it, `init_window` the global
// initial_destination_concurrency.
void log_feedback_setting(const std::string& transport, const std::string& param,
                          const core::Feedback& fb, int init_window);
// "qmgr_queue_(un)throttle: feedback X" before a step is applied.
void log_queue_feedback(const core::Queue& q, bool positive, double step);
// "qmgr_queue_(un)throttle: queue NAME: limit ... fail_cohorts X".
void log_queue_window(const core::Queue& q, bool positive);

} // namespace cqmgr::qmgr
