// The log line qmgr writes for a recipient it handles itself, without a
// delivery agent (a deferral when even the retry service is dead, a
// discarded double bounce):
//   ID: to=<addr>, orig_to=<addr>, relay=none, delay=D, delays=a/b/0/0,
//       dsn=X.Y.Z, status=STATUS (TEXT)
// with the times and addresses formatted as Postfix formats them.
#pragma once

#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/queuefile/envelope.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

// Formats seconds with two significant digits as Postfix's format_tv does
// (whole seconds from 10 s, tenths from 1 s, else hundredths).
std::string format_seconds(double seconds);

// "delay=..., delays=a/b/0/0" at time `now` for a message that arrived at
// `arrival` and became active at `active`.
std::string delay_text(const protocol::TimeVal& arrival, const protocol::TimeVal& active,
                       const protocol::TimeVal& now);

// An address as log lines show it: as is with info_log_address_format =
// internal, else with its local part quoted where RFC 5321 wants it.
std::string log_address(std::string_view addr, bool internal_form);

// What the line says besides the recipient.
struct StatusLine {
    std::string_view queue_id;
    std::string_view dsn;
    std::string_view status; // "sent", "deferred"
    std::string_view text;
    bool internal_form = false; // info_log_address_format = internal
};
// The whole line (without "warning:" or the like).
std::string status_line(const StatusLine& s, const queuefile::Recipient& r,
                        const queuefile::Envelope& env, const protocol::TimeVal& active,
                        const protocol::TimeVal& now);

} // namespace cqmgr::qmgr
