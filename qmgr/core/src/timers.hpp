// The scheduler's timers: revivals of dead queues and transports, the end
// of a queue's rate-delay pause, the end of an administrator's hold or
// cap, of a reply rule's action or of a learned hold, a sender group's
// rate (sender.cpp), and the end of a reply rule's bound on a sender
// group or of its pause (sender_rule.cpp).  Each names what it is for,
// not a pointer to it, so a timer that outlives its object is harmless: it
// finds nothing, or finds that the object's own due time moved on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace cqmgr::core {

struct Timer {
    enum class Kind {
        queue_revive,
        queue_resume,
        transport_revive,
        hold_expire,    // an administrator's suspension ends
        cap_expire,     // an administrator's cap ends
        rule_expire,    // a reply rule's action ends
        learned_expire, // a learned hold (a window's quota spent) ends
        sender,         // a sender group's rate allows a start again, or its load may go
        sender_rule,    // a reply rule's bound on a sender group ends, or its pause
    } kind;
    std::string transport;
    std::string queue;
};

class Timers {
  public:
    // Sets timer `t` for `due`.
    void add(int64_t due, Timer t) { timers_.emplace(due, std::move(t)); }
    // When the next timer is due, if any.
    std::optional<int64_t> next() const {
        if (timers_.empty()) return std::nullopt;
        return timers_.begin()->first;
    }
    // Takes the first timer that is due at `now` or before, with its due
    // time, if there is one.
    std::optional<std::pair<int64_t, Timer>> take_due(int64_t now) {
        if (timers_.empty() || timers_.begin()->first > now) return std::nullopt;
        auto it = timers_.begin();
        std::pair<int64_t, Timer> due{it->first, std::move(it->second)};
        timers_.erase(it);
        return due;
    }
    // Whether a timer of `kind` for `transport` and `queue` is set for `due`.
    bool has(int64_t due, Timer::Kind kind, const std::string& transport,
             const std::string& queue) const {
        auto [lo, hi] = timers_.equal_range(due);
        for (auto it = lo; it != hi; ++it)
            if (it->second.kind == kind && it->second.transport == transport &&
                it->second.queue == queue)
                return true;
        return false;
    }

  private:
    std::multimap<int64_t, Timer> timers_;
};

} // namespace cqmgr::core
