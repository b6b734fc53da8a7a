// Limits learned from what the receivers say (the daemon's adaptive
// limits, docs/admin-guide.md): a concurrency cap and a pause between
// deliveries per queue.  One of the bounds on a queue (limits.hpp), kept
// by name like the administrator's settings (limit_book.hpp) and separate
// from them: a learned cap and an administrator's cap both lower the
// window selection uses.
#pragma once

namespace cqmgr::core {

struct LearnedLimit {
    int concurrency = 0; // deliveries at once; 0 = none learned
    int rate_delay = 0;  // seconds to pause after each delivery (window 1 then); 0 = none

    bool any() const { return concurrency > 0 || rate_delay > 0; }
    bool operator==(const LearnedLimit&) const = default;
};

} // namespace cqmgr::core
