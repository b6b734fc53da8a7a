// Limits learned from what the receivers say (the daemon's adaptive
// limits, docs/admin-guide.md): a concurrency cap, a pause between
// deliveries, and a fixed window's quota per queue.  One of the bounds on a queue (limits.hpp),
// kept by name like the administrator's settings (limit_book.hpp) and separate from them: a learned
// cap and an administrator's cap both lower the window selection uses.
#pragma once

#include <cstdint>

namespace cqmgr::core {

struct LearnedLimit {
    int concurrency = 0; // deliveries at once; 0 = none learned
    int rate_delay = 0;  // seconds to pause after each delivery (window 1 then); 0 = none
    // A receiver that counts in fixed windows (the daemon's window model):
    // at most `quota` deliveries start per window of `window` seconds; 0 =
    // none.  The daemon counts the starts; the core reads only the hold.
    int quota = 0;
    int window = 0;
    // No new delivery starts before this time (the core's clock): the
    // window's quota is spent.  Ends by itself (a timer); 0 = no hold.
    int64_t held_until = 0;

    bool any() const { return concurrency > 0 || rate_delay > 0 || quota > 0 || held_until > 0; }
    bool operator==(const LearnedLimit&) const = default;
};

} // namespace cqmgr::core
