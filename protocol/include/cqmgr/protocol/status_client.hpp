// Requests to the delivery status services: bounce(8) running as `bounce`,
// `defer` and `trace` (sockets private/bounce, private/defer, private/trace).
//
//  * append (nrequest=0): one recipient's outcome is added to the message's
//    log (bounce/ID, defer/ID or trace/ID).  Synchronous in Postfix
//    (mail_command_client); qmgr uses it for defer_append when the `retry`
//    transport is unavailable.
//  * notices (flush=1, warn=2, verp=3, trace=5): the end-of-message requests
//    that turn a log into a notification mail (abounce in Postfix).
//
// The reply is `status`: 0 done, anything else failed.
#pragma once

#include "cqmgr/protocol/command_client.hpp"
#include "cqmgr/protocol/messages.hpp"

#include <string>
#include <string_view>

namespace cqmgr::protocol {

// The append request: nrequest=0, flags, queue_id, the five rcpt_print
// attributes, the seven dsn_print attributes, in that order.
struct AppendRequest {
    int flags = 0; // qmgr sends the message's trace flags only
    std::string queue_id;
    RequestRecipient recipient;
    HopStatus dsn;

    std::string encode() const;
};

// Builders that apply what Postfix's defer_append(), bounce_append() and
// trace_append() do to the status before sending (the caller picks the
// service socket):
//  defer: a status that is not a valid 4.x.x becomes 4.0.0; action "delayed".
//  bounce: a status that is not a valid 5.x.x becomes 5.0.0; action "failed".
//  trace: the reason is prefixed with "delivery via RELAY: " unless RELAY is
//         "none"; status and action are kept.
AppendRequest defer_append_request(int tflags, std::string queue_id, RequestRecipient rcpt,
                                   HopStatus dsn);
AppendRequest bounce_append_request(int tflags, std::string queue_id, RequestRecipient rcpt,
                                    HopStatus dsn);
AppendRequest trace_append_request(int tflags, std::string queue_id, RequestRecipient rcpt,
                                   HopStatus dsn, std::string_view relay);

// Sends one append to `path` ("private/defer", ...).  result.ok() when the
// service logged the record.  Note that Postfix's defer_append() reports -1
// to its caller even after a successful append (the recipient still needs a
// retry); that is the caller's policy, not this exchange's.
awaitable<CommandResult> status_append(std::string path, AppendRequest request,
                                       CommandTimeouts timeouts);

// Sends one notice request (NoticeRequest in messages.hpp: flush, warn, verp
// or trace) to `path`.  result.ok() when the service sent the notification
// (or had nothing to send).  Stock qmgr logs "ID: status=deferred (<what>
// failed)" when this fails and the flags lack BOUNCE_FLAG_CLEAN;
// notice_failure_text() gives <what>.
awaitable<CommandResult> status_notify(std::string path, NoticeRequest request,
                                       CommandTimeouts timeouts);

// "bounce", "delay warning", "verp" or "trace": what stock qmgr names a failed
// notice of kind `nrequest` in its log.
std::string_view notice_failure_text(int nrequest);

} // namespace cqmgr::protocol
