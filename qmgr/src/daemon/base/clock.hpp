// The daemon's one source of time, handed to each of its parts, so that the
// scheduler, the log lines and the file times all agree, and a test can
// run a part on a clock of its own.
#pragma once

#include "cqmgr/protocol/messages.hpp"

#include <cstdint>
#include <ctime>
#include <sys/time.h>

namespace cqmgr::qmgr {

class WallClock {
  public:
    virtual ~WallClock() = default;
    // Seconds since the epoch.
    virtual int64_t now() const = 0;
    // Seconds and microseconds since the epoch.
    virtual protocol::TimeVal precise() const = 0;
    // Milliseconds since the epoch.
    int64_t now_ms() const {
        protocol::TimeVal t = precise();
        return t.sec * 1000 + t.usec / 1000;
    }
};

// The system's clock.
class SystemClock final : public WallClock {
  public:
    int64_t now() const override { return ::time(nullptr); }
    protocol::TimeVal precise() const override {
        timeval tv;
        ::gettimeofday(&tv, nullptr);
        return {tv.tv_sec, tv.tv_usec};
    }
};

} // namespace cqmgr::qmgr
