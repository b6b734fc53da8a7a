// Concurrency feedback as the Postfix 2.5 scheduler defines it: a step that
// is a constant, or a constant divided by the window (or by its square root).
// The text forms of main.cf are parsed by conf::parse_feedback().
#pragma once

namespace cqmgr::core {

struct Feedback {
    enum class Kind { constant, per_window, per_sqrt_window };
    Kind kind = Kind::constant;
    double base = 1.0;

    // The adjustment at concurrency window `window` (>= 1).
    double value(int window) const;
};

} // namespace cqmgr::core
