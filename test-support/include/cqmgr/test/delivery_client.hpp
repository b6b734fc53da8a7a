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

#include "cqmgr/protocol/agent_call.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/delivery_outcome.hpp"
#include "cqmgr/protocol/messages.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace cqmgr::protocol {

// AgentCall (agent_call.hpp) behind an awaitable interface, for callers
// that are coroutines (the tests; the queue manager drives AgentCall
// itself).
class AgentSession {
  public:
    explicit AgentSession(asio::any_io_executor ex);
    AgentSession(AgentSession&&) noexcept;
    AgentSession& operator=(AgentSession&&) noexcept;
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
    // The same with the request already encoded (DeliveryRequest::encode).
    awaitable<DeliveryOutcome> deliver_encoded(std::string request);

    // Abandons an open session without a request (the agent sees EOF and
    // does nothing).
    void close();

    const DeliveryOutcome& failure() const;
    // What stock's attribute scanner logged about the announcement, whether
    // open() failed (then also failure().detail) or not: stock accepts an
    // announcement that lacks its attribute or has one too many, with this
    // warning.  Empty when the announcement was as expected.
    const std::string& announcement_warning() const;
    const std::string& path() const { return path_; }

  private:
    // The call, with what it said kept for the coroutines that wait on it.
    class Bridge;
    // Waits until the call has said something new.
    awaitable<void> wait();

    asio::any_io_executor ex_;
    boost::intrusive_ptr<Bridge> call_;
    std::string path_;
    DeliveryOutcome failure_; // when the session never got a call
};

// open() and deliver() in one call (an announcement's accepted-with-warning
// line, announcement_warning(), is not passed on).
awaitable<DeliveryOutcome> deliver_once(std::string path, DeliveryRequest request,
                                        DeliveryTimeouts timeouts);

} // namespace cqmgr::protocol
