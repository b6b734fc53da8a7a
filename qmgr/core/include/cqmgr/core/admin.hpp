// Runtime control by the administrator (the control socket's suspend,
// resume, throttle, unthrottle and flush): what a setting names and what it
// holds.  The scheduler keeps these settings by name, so that a queue
// created later (or after a restart, before any mail is read) picks them up.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace cqmgr::core {

// What an administrative setting applies to:
//   transport alone (queue empty)     the whole transport
//   transport and queue               that queue (destination) of that transport
//   queue alone (transport empty)     that queue on every transport that has it,
//                                     now or later
struct AdminTarget {
    std::string transport;
    std::string queue;

    auto operator<=>(const AdminTarget&) const = default;
    bool whole_transport() const { return queue.empty(); }
    bool any_transport() const { return transport.empty(); }
    // As the protocol writes it: "smtp", "smtp:example.com" or "example.com".
    std::string text() const {
        if (queue.empty()) return transport;
        if (transport.empty()) return queue;
        return transport + ":" + queue;
    }
};

// A suspension: no new delivery starts there; its mail waits in the active
// queue, nothing is deferred by the suspension itself.
struct AdminHold {
    int64_t until = 0; // when it ends by itself; 0 = at resume only
    std::string reason;
    int64_t uid = 0;   // who set it
    int64_t since = 0; // when it was set (Unix seconds); 0 = not known
    bool operator==(const AdminHold&) const = default;
};

// A concurrency cap on a queue: selection uses min(window, concurrency);
// the concurrency feedback still moves the window as usual.
struct AdminCap {
    int concurrency = 1; // >= 1
    int64_t until = 0;   // when it ends by itself; 0 = at unthrottle only
    int64_t uid = 0;     // who set it
    int64_t since = 0;   // when it was set (Unix seconds); 0 = not known
    bool operator==(const AdminCap&) const = default;
};

// Which kind of setting (for the driver's expiry notice): an
// administrator's hold or cap, or a reply rule's action (limits.hpp).
enum class AdminKind { hold, cap, rule };

} // namespace cqmgr::core
