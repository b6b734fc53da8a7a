// Rate-limited warnings for trouble that repeats for every file while it
// lasts, such as a full queue file system: the first warning of a kind is
// logged, further ones of that kind are counted for `interval` seconds, and
// the next one logged after that says how many were left out.  Stock qmgr
// has no such case (it stops at the first of these errors); a daemon that
// keeps running must not flood the log instead.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cqmgr::qmgr {

class WarningLimiter {
  public:
    explicit WarningLimiter(int64_t interval = 60) : interval_(interval) {}

    // The text to log for a warning of kind `kind` at time `now`, or nullopt
    // when it is to be left out.
    std::optional<std::string> filter(const std::string& kind, const std::string& text,
                                      int64_t now);

  private:
    struct Kind {
        int64_t last_logged = 0;
        long left_out = 0;
    };
    int64_t interval_;
    std::map<std::string, Kind> kinds_;
};

} // namespace cqmgr::qmgr
