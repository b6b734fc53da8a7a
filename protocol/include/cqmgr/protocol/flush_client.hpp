// Requests to flush(8), the fast-flush service (socket public/flush,
// announcement "queue_flush_protocol").  qmgr's defer_append() registers
// each deferred recipient's queue ID under its domain with `add`.
#pragma once

#include "cqmgr/protocol/command_client.hpp"

#include <string>

namespace cqmgr::protocol {

// Reply status values.
namespace flush_stat {
inline constexpr int ok = 0;
inline constexpr int fail = -1;
inline constexpr int bad = 3;
inline constexpr int deny = 4; // the site is not eligible (fast_flush_domains)
} // namespace flush_stat

// request=add, site, queue_id.
std::string encode_flush_add(std::string_view site, std::string_view queue_id);

// Appends `queue_id` to the fast-flush log of `site`.  result.status is a
// flush_stat value.  Postfix's flush_add() first checks fast_flush_domains
// itself and answers DENY without connecting; that check stays with the
// caller (the server checks again anyway).
awaitable<CommandResult> flush_add(std::string path, std::string site, std::string queue_id,
                                   CommandTimeouts timeouts);

// request=send_site, site.
std::string encode_flush_send_site(std::string_view site);

// Asks for delivery of the mail deferred for `site` (postqueue -s).  Like
// flush_add(), the fast_flush_domains check stays with the caller.
awaitable<CommandResult> flush_send_site(std::string path, std::string site,
                                         CommandTimeouts timeouts);

} // namespace cqmgr::protocol
