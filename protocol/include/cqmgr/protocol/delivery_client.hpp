// Client for the delivery request exchange with a delivery agent (smtp,
// local, virtual, pipe, discard, error/retry, ...; socket
// private/<transport>, announcement "delivery_request_protocol").
//
// The exchange has two phases because stock qmgr picks the work only once
// an agent has announced itself:
//   AgentSession s(ex);
//   if (!co_await s.open("private/smtp", timeouts)) -> s.failure() (unavailable)
//   ... pick the entry ...
//   DeliveryOutcome o = co_await s.deliver(request);   (or s.close() if no work)
// deliver_once() does both in one call.
//
// Every failure maps to one of two typed outcomes, each with the hop status
// stock qmgr would use, so the daemon never sees bytes or errno values:
//  * unavailable: connect, announcement or request write failed.  Stock qmgr
//    throttles the transport with "4.3.0 mail transport unavailable", puts
//    the entry back and defers the transport's other work.
//  * crashed: the request went out but no well-formed reply came back (EOF,
//    I/O error, garbage, over-long data, timeout).  Stock qmgr defers the
//    message with "4.3.0 unknown mail transport error", gives the queue no
//    feedback, and does not unthrottle the transport.
//
// The announcement and the reply are read as stock reads them (attr_scan.hpp),
// so the same bytes give the same verdict and the same warning: stock also
// accepts, with a warning, an announcement that lacks its attribute or has
// one too many, and a reply with an attribute after the status.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/attr_scan.hpp"
#include "cqmgr/protocol/conversation.hpp"
#include "cqmgr/protocol/messages.hpp"

#include <chrono>
#include <memory>
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

class AgentSession {
  public:
    explicit AgentSession(asio::any_io_executor ex);
    AgentSession(AgentSession&&) = default;
    AgentSession& operator=(AgentSession&&) = default;
    ~AgentSession();

    // Connects to `path` and waits for the agent's announcement.  False when
    // the agent is unavailable; failure() then holds the outcome.  As in stock
    // qmgr, an EOF before any byte of the announcement is not yet a failure:
    // it surfaces when deliver() writes the request.
    awaitable<bool> open(std::string path, DeliveryTimeouts timeouts);
    // The same in two steps: start() connects without waiting and is false
    // when that failed at once (failure() set); finish_open() waits for the
    // connection and the announcement.
    bool start(std::string path, DeliveryTimeouts timeouts);
    awaitable<bool> finish_open();

    // Sends one request and reads the reply, then closes the connection (the
    // agent waits for that close).  Call only after open() returned true.
    awaitable<DeliveryOutcome> deliver(DeliveryRequest request);
    // The same with the request already encoded (DeliveryRequest::encode):
    // a caller that encodes in a plain function keeps the request's many
    // strings out of the coroutine frames, which then stay small enough
    // for the allocator's fast path.
    awaitable<DeliveryOutcome> deliver_encoded(std::string request);

    // Abandons an open session without a request (the agent sees EOF and
    // does nothing).
    void close();

    const DeliveryOutcome& failure() const { return failure_; }
    // What stock's attribute scanner logged about the announcement, whether
    // open() failed (then also failure().detail) or not: stock accepts an
    // announcement that lacks its attribute or has one too many, with this
    // warning.  Empty when the announcement was as expected.
    const std::string& announcement_warning() const { return failure_.detail; }
    const std::string& path() const { return path_; }

  private:
    // Sets failure() for a connection that could not be made, and closes.
    void connect_failed();
    // Fills an outcome of `kind` with the stock hop status and `warning`.
    static DeliveryOutcome failed(DeliveryOutcome::Kind kind, std::string warning);
    // deliver_encoded()'s steps that do not wait: whether the request can
    // go out (then the agent's unread bytes are dropped, as stock drops
    // them); the outcome when it cannot; the outcome when writing it failed
    // (both close the session).
    bool ready_to_write();
    DeliveryOutcome not_writable();
    DeliveryOutcome write_failed();
    // Reads and decodes the agent's reply (its own coroutine, so that the
    // scan stays out of deliver_encoded's frame).
    awaitable<DeliveryOutcome> read_reply();
    // Feeds the agent's bytes to `scan` until it is done; the first byte
    // may take `first_byte`, each later read timeouts_.read.  False when no
    // byte came at all within `first_byte`.
    awaitable<bool> run_scan(AttrScan& scan, DeliveryTimeouts::Duration first_byte);
    // The transport's name, the last component of path_, for "write to
    // process (NAME)".
    std::string transport() const;
    // Turns a finished scan of a reply into an outcome.
    DeliveryOutcome outcome_of(AttrScan& scan) const;

    asio::any_io_executor ex_;
    std::shared_ptr<Conversation> conv_;
    std::string path_;
    DeliveryTimeouts timeouts_;
    // When open() is false, the outcome; either way its detail is the
    // announcement's scan warning.  (Few members: the daemon keeps a session
    // in a per-delivery coroutine frame, which should stay near 1 kB.)
    DeliveryOutcome failure_;
};

// open() and deliver() in one call (an announcement's accepted-with-warning
// line, announcement_warning(), is not passed on).
awaitable<DeliveryOutcome> deliver_once(std::string path, DeliveryRequest request,
                                        DeliveryTimeouts timeouts);

} // namespace cqmgr::protocol
