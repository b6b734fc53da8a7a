// The per-message defer log (queue directory defer/ID) as the adaptive
// limits read it: an agent that defers single recipients (an SMTP 4xx to
// MAIL, RCPT or DATA) has the defer service append one record per
// recipient before it replies to the queue manager, and its reply carries
// no text of its own.  A record is a blank line, `name=value` lines
// (`recipient`, `offset`, `status`, `reason`, ...), and a blank line
// (docs/postfix-facts.md §6.8); an old-style `<address>: reason` line may
// come first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

struct DeferRecord {
    int64_t offset = 0; // the recipient's offset in the queue file (0: none given)
    std::string status; // DSN status, e.g. "4.7.1"
    std::string reason; // e.g. "host mx[192.0.2.1] said: 450 4.7.1 ..."
};

// The complete records in `text` (a record cut short at the end is left out).
std::vector<DeferRecord> parse_defer_records(std::string_view text);

// The size of the file at `path` (0 when it does not exist).
int64_t file_size(const std::string& path);
// At most `limit` bytes of the file at `path` from `from` on ("" on error).
std::string read_from(const std::string& path, int64_t from, size_t limit);

} // namespace cqmgr::qmgr
