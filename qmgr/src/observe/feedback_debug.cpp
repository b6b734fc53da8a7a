#include "feedback_debug.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
// Stock names the function that adjusted the window.
const char* origin(bool positive) {
    return positive ? "qmgr_queue_unthrottle" : "qmgr_queue_throttle";
}

// The retry and error transports have no real destinations to tune.
bool is_pseudo(const core::Queue& q) {
    return q.transport->name == "retry" || q.transport->name == "error";
}
} // namespace

void log_feedback_setting(const std::string& transport, const std::string& param,
                          const core::Feedback& fb, int init_window) {
    // Postfix numbers the kinds 0 (constant) and 1 (per window).
    int kind = fb.kind == core::Feedback::Kind::constant ? 0 : 1;
    log::info(transport + ": " + param + " feedback type " + std::to_string(kind) + " value at " +
              std::to_string(init_window) + ": " + log::format_g(fb.value(init_window)));
}

void log_queue_feedback(const core::Queue& q, bool positive, double step) {
    if (is_pseudo(q)) return;
    log::info(std::string(origin(positive)) + ": feedback " + log::format_g(step));
}

void log_queue_window(const core::Queue& q, bool positive) {
    if (is_pseudo(q)) return;
    log::info(std::string(origin(positive)) + ": queue " + q.name + ": limit " +
              std::to_string(q.transport->cfg.dest_concurrency_limit) + " window " +
              std::to_string(q.window) + " success " + log::format_g(q.success) + " failure " +
              log::format_g(q.failure) + " fail_cohorts " + log::format_g(q.fail_cohorts));
}

} // namespace cqmgr::qmgr
