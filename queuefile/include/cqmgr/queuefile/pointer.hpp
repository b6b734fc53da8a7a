// Following 'p' (pointer) records.  A pointer payload is "%15ld": 0 is a
// placeholder that is simply passed over, anything else is the absolute
// offset where reading goes on.  Like Postfix, a reader gives up after 10000
// jumps to an offset at or before the previous jump target, which is what
// stops pointer loops.
#pragma once

#include "cqmgr/queuefile/record.hpp"

#include <optional>

namespace cqmgr::queuefile {

inline constexpr int max_reverse_jumps = 10000;

class PointerFollower {
  public:
    // Follows the pointer record `payload`, read at `at` from `in`: seeks
    // `in` to the target (nothing for a placeholder).  Returns the target
    // (0 for a placeholder), or nothing with `error` set when the payload is
    // not an offset or the loop limit is hit.
    std::optional<int64_t> follow(RecordStream& in, std::string_view payload, off_t at,
                                  FileError& error);

    // Backward jumps counted so far.
    int reverse_jumps() const { return reverse_jumps_; }
    // The counter state, so that the batches of one message share it as
    // Postfix's per-file counter does.
    int64_t last_target() const { return last_target_; }
    void restore(int64_t last_target, int reverse_jumps) {
        last_target_ = last_target;
        reverse_jumps_ = reverse_jumps;
    }

  private:
    int64_t last_target_ = 0;
    int reverse_jumps_ = 0;
};

} // namespace cqmgr::queuefile
