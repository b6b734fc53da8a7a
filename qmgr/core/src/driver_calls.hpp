// The core's calls to its driver, and the check that the driver does not
// call back into the core from inside one.
//
// A driver callback that only notifies (a window moved, a queue is born or
// freed, a wakeup, a warning) runs while the core is halfway through one of
// its own operations: a Scheduler call made from there would see, and
// change, state the core has not finished with.  So every notification
// counts itself in `notifying`, and every Scheduler call that changes
// anything panics when it finds one running (Scheduler::in_callback() lets
// the driver ask first).  Two callbacks are requests the driver may answer
// at once, and the core is ready for that: refill() (assign() and
// batch_done()) and message_done() (message_free(), or reading on).
//
// The check is one load and a predictable branch per Scheduler call, and
// is always on: the test suite runs with it.
#pragma once

#include "cqmgr/core/panic.hpp"
#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

class DriverCalls {
  public:
    explicit DriverCalls(Driver& d) : d_(d) {}

    // Panics when a notification of the driver is running: Scheduler call
    // `api` would re-enter the core from inside it.
    void outside(const char* api) const {
        if (notifying_ != 0) [[unlikely]]
            reentered(api);
    }
    bool notifying() const { return notifying_ != 0; }

    // Requests the driver may answer at once (see above).
    void refill(Message& m, int limit) { d_.refill(m, limit); }
    void message_done(Message& m) { d_.message_done(m); }

    // Notifications.
    void defer_recipients(Message& m, const std::vector<Recipient>& rcpts, const Dsn& dsn) {
        Notifying n(*this);
        d_.defer_recipients(m, rcpts, dsn);
    }
    void wakeup() {
        Notifying n(*this);
        d_.wakeup();
    }
    void warn(const std::string& text) {
        Notifying n(*this);
        d_.warn(text);
    }
    int active_messages() {
        Notifying n(*this);
        return d_.active_messages();
    }
    void queue_feedback(const Queue& q, bool positive, double step) {
        Notifying n(*this);
        d_.queue_feedback(q, positive, step);
    }
    void queue_window(const Queue& q, bool positive) {
        Notifying n(*this);
        d_.queue_window(q, positive);
    }
    // Const: the core traces from its const paths too.
    void trace(const std::string& line) const {
        Notifying n(*this);
        d_.trace(line);
    }
    void admin_expired(AdminKind kind, const AdminTarget& target) {
        Notifying n(*this);
        d_.admin_expired(kind, target);
    }
    void sender_rule_expired(const AdminTarget& target, SenderGroup g) {
        Notifying n(*this);
        d_.sender_rule_expired(target, g);
    }
    std::optional<int> queue_gate(const Queue& q) {
        Notifying n(*this);
        return d_.queue_gate(q);
    }
    uint32_t queue_provider(const Queue& q) {
        Notifying n(*this);
        return d_.queue_provider(q);
    }
    void queue_freed(const Queue& q) {
        Notifying n(*this);
        d_.queue_freed(q);
    }

  private:
    // The panic, out of line: the check stays a compare and a branch.
    [[noreturn, gnu::cold, gnu::noinline]] static void reentered(const char* api);

    // Counts one notification for as long as it runs (they nest: a
    // request answered at once may notify in turn).
    struct Notifying {
        explicit Notifying(const DriverCalls& c) : c_(c) { ++c_.notifying_; }
        ~Notifying() { --c_.notifying_; }
        Notifying(const Notifying&) = delete;
        Notifying& operator=(const Notifying&) = delete;
        const DriverCalls& c_;
    };

    Driver& d_;
    mutable int notifying_ = 0;
};

} // namespace cqmgr::core
