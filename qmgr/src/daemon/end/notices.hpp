// The end-of-message requests to the bounce(8) daemon under its three names:
// bounce flush, defer flush (expiry), delay warning, and trace flush.  Each is
// one connection, one request, one `status` reply, like Postfix's abounce.
#pragma once

#include "cqmgr/protocol/conversation.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/queuefile/envelope.hpp"
#include "service_slots.hpp"

#include <string>

namespace cqmgr::qmgr {

// Sends `req` to `private/<service>` and returns the server's status, or -1
// on any failure.  A failure is logged as "ID: status=deferred (<what>
// failed)" unless the request has the CLEAN flag; <what> is named after the
// command as stock's abounce names it.  `ipc_timeout` is qmgr_ipc_timeout.
// The connection takes one of `slots` (service_slots.hpp).
awaitable<int> send_notice(ServiceSlots& slots, std::string service, protocol::NoticeRequest req,
                           std::chrono::seconds ipc_timeout);

// Appends one deferred recipient to the defer log through `private/<service>`
// (the per-recipient append of stock's defer_append).  Returns the status.
// The connection takes one of `slots`.
awaitable<int> send_deferral(ServiceSlots& slots, std::string service, std::string queue_id,
                             int tflags, queuefile::Recipient rcpt, std::string status,
                             std::string reason, std::chrono::seconds ipc_timeout);

} // namespace cqmgr::qmgr
