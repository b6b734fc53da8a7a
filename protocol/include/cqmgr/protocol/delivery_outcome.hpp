// What a delivery agent made of a request, as the queue manager sees it,
// and the deadlines of the exchange (agent_call.hpp).
#pragma once

#include "cqmgr/protocol/messages.hpp"

#include <chrono>
#include <string>

namespace cqmgr::protocol {

struct DeliveryTimeouts {
    using Duration = std::chrono::steady_clock::duration;
    // The first byte of the announcement and of the reply may take
    // `announce` and `reply`; each later read of either, `read`.
    Duration connect = std::chrono::seconds(60);     // qmgr_ipc_timeout
    Duration announce = std::chrono::seconds(18000); // daemon_timeout
    Duration write = std::chrono::seconds(60);       // qmgr_ipc_timeout
    Duration reply = std::chrono::seconds(18000);    // daemon_timeout
    Duration read = std::chrono::seconds(60);        // qmgr_ipc_timeout

    // The stock mapping from main.cf: I/O steps use qmgr_ipc_timeout, the
    // two waits for the agent to start talking use daemon_timeout.
    static DeliveryTimeouts from_settings(Duration qmgr_ipc_timeout, Duration daemon_timeout) {
        return {qmgr_ipc_timeout, daemon_timeout, qmgr_ipc_timeout, daemon_timeout,
                qmgr_ipc_timeout};
    }
};

struct DeliveryOutcome {
    enum class Kind { replied, unavailable, crashed };
    Kind kind = Kind::crashed;
    // replied: the agent's reply.  unavailable: hop 4.3.0 "mail transport
    // unavailable", status -1.  crashed: hop 4.3.0 "unknown mail transport
    // error", status -1.
    DeliveryReply reply;
    // When not replied: the warning stock qmgr logs, e.g.
    // "connect to transport private/smtp: Connection refused",
    // "private/smtp socket: malformed response",
    // "write to process (smtp): Broken pipe".
    std::string warning;
    // What stock's attribute scanner logs about the agent's bytes, before
    // `warning`, e.g. "unexpected attribute foo from private/smtp socket
    // (expecting: status)".  Also set on a reply that stock accepts with a
    // warning (an attribute after the last one); empty when the bytes were
    // as expected or there were none.
    std::string detail;

    // True when the message must be retried (anything but a zero status).
    bool deferred() const { return kind != Kind::replied || reply.status != 0; }
};

// Names an outcome kind for logs and test messages.
const char* kind_name(DeliveryOutcome::Kind k);

} // namespace cqmgr::protocol
