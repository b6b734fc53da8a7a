// Deferrals qmgr makes itself: recipients that cannot go even to the retry
// service (it is dead as well) are deferred as stock's defer_append() does
// it: a record in the message's defer log through the defer service, the
// "status=deferred" log line, then the fast flush log when
// fast_flush_domains lists the recipient's domain.  The message counts the
// records still being written, so that its end waits for them.
//
// The defer service takes one request per connection.  A message's records
// are written one after another, in the order they were asked for, by one
// conversation at a time; and every conversation takes one of the daemon's
// service slots (service_slots.hpp), so that a batch of thousands of
// recipients to a dead route, or many such messages at once, never opens
// more than that many connections.
#pragma once

#include "clock.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/structures.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "fast_flush.hpp"
#include "message.hpp"
#include "service_slots.hpp"

#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class SelfDefer {
  public:
    // `written` runs after each record, for the message's end to proceed.
    SelfDefer(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
              const FlushDomains& flush_domains, ServiceSlots& slots,
              std::function<void(Message&)> written);

    // Defers `rcpts` of `m` with `dsn` (a 4.X.Y status; others become 4.0.0).
    void defer(Message& m, const std::vector<queuefile::Recipient>& rcpts, const core::Dsn& dsn);

    // Messages with records waiting or being written.
    std::size_t busy() const { return pending_.size(); }

  private:
    struct Record {
        queuefile::Recipient rcpt;
        core::Dsn dsn;
    };
    std::chrono::seconds ipc_timeout() const {
        return std::chrono::seconds(params_.qmgr_ipc_timeout);
    }
    // Writes the records of `m` until none is left.
    awaitable<void> drain(Message* m);
    // Writes one record of `m`, logs it, and registers it with flush(8).
    awaitable<void> append(Message* m, const Record& rec);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const WallClock& clock_;
    const FlushDomains& flush_domains_;
    ServiceSlots& slots_;
    std::function<void(Message&)> written_;
    // The records still to write, per message; a message is here while its
    // drain() runs (the message cannot end meanwhile: io_pending counts them).
    std::unordered_map<const Message*, std::deque<Record>> pending_;
};

} // namespace cqmgr::qmgr
