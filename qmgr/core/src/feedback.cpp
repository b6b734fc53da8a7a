// The concurrency feedback: its value per window, and the window's moves.
#include "cqmgr/core/feedback.hpp"

#include "window.hpp"

#include <cmath>

namespace cqmgr::core {

double Feedback::value(int window) const {
    if (window < 1) window = 1;
    switch (kind) {
    case Kind::constant:
        return base;
    case Kind::per_window:
        return base / window;
    case Kind::per_sqrt_window:
        return base / std::sqrt(static_cast<double>(window));
    }
    return base;
}

void window_grow(Queue& q, DriverCalls& driver) {
    const TransportConfig& c = q.transport->cfg;
    int limit = c.dest_concurrency_limit;
    if ((limit == 0 || limit > q.window) && q.window < q.busy_count() + c.init_dest_concurrency) {
        double fb = c.pos_feedback.value(q.window);
        driver.queue_feedback(q, true, fb);
        q.success += fb;
        double guard = c.overshoot_guard ? fb / 2 : 0;
        while (q.success + guard >= 1) {
            q.window += 1;
            q.success -= 1;
            q.failure = 0;
        }
        if (limit > 0 && q.window > limit) q.window = limit;
    }
}

void window_shrink(Queue& q, DriverCalls& driver) {
    const TransportConfig& c = q.transport->cfg;
    // A destination that fails a whole pseudo-cohort is declared dead.
    q.fail_cohorts += 1.0 / q.window;
    if (c.fail_cohort_limit > 0 && q.fail_cohorts >= c.fail_cohort_limit) q.window = 0;
    if (q.ready()) {
        double fb = c.neg_feedback.value(q.window);
        driver.queue_feedback(q, false, fb);
        q.failure -= fb;
        double guard = c.overshoot_guard ? fb / 2 : 0;
        while (q.failure - guard < 0) {
            q.window -= 1;
            q.success = 0;
            q.failure += 1;
        }
        if (q.window < 1) q.window = 1;
    }
}

} // namespace cqmgr::core
