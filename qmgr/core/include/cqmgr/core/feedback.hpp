// Concurrency feedback as the Postfix 2.5 scheduler defines it: a step that
// is a constant, or a constant divided by the window (or by its square root).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::core {

struct Feedback {
    enum class Kind { constant, per_window, per_sqrt_window };
    Kind kind = Kind::constant;
    double base = 1.0;

    // The adjustment at concurrency window `window` (>= 1).
    double value(int window) const;
};

// Parses "N", "N/M", "N/concurrency" and "N/sqrt_concurrency".  Postfix 3.7
// compiles out the sqrt form; `allow_sqrt` says whether to accept it here.
// Returns nullopt for a malformed value or one outside [0, 1].
std::optional<Feedback> parse_feedback(std::string_view text, bool allow_sqrt);

} // namespace cqmgr::core
