// Concurrency feedback values (default_destination_concurrency_positive_feedback,
// ..._negative_feedback and their per-transport forms) as qmgr(8) 3.7 reads
// them: "N" (a constant), "N/M" (a ratio), or "N/concurrency" (divided by
// the current window; the word is case-insensitive).  N may be any C
// floating-point number and white space may surround the "/".  The result
// must lie in [0, 1].  "N/sqrt_concurrency" is NOT accepted by 3.7: that
// variant is compiled out, so it is treated as malformed; only the
// simulator, which models the published experiments, asks for it.  qmgr
// only warns about a malformed or unreasonable value and then uses 1.
#pragma once

#include <optional>
#include <string_view>

namespace cqmgr::conf {

struct Feedback {
    double base = 1;              // the constant, or the numerator for /concurrency
    bool per_concurrency = false; // true: the amount is base / window
    bool sqrt = false;            // with per_concurrency: base / sqrt(window)

    // The feedback amount at a given concurrency window.
    double at(int window) const;
};

// Parses a feedback value; nullopt when qmgr would warn "ignoring malformed
// or unreasonable feedback" (and use Feedback{} instead).  `allow_sqrt`
// accepts "N/sqrt_concurrency" too.
std::optional<Feedback> parse_feedback(std::string_view value, bool allow_sqrt = false);

} // namespace cqmgr::conf
