// Deferrals qmgr makes itself: recipients that cannot go even to the retry
// service (it is dead as well) are deferred as stock's defer_append() does
// it: a record in the message's defer log through the defer service, the
// "status=deferred" log line, then the fast flush log when
// fast_flush_domains lists the recipient's domain.  The message counts the
// records still being written, so that its end waits for them.
#pragma once

#include "clock.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/structures.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "fast_flush.hpp"
#include "message.hpp"

#include <functional>
#include <vector>

namespace cqmgr::qmgr {

class SelfDefer {
  public:
    // `written` runs after each record, for the message's end to proceed.
    SelfDefer(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
              const FlushDomains& flush_domains, std::function<void(Message&)> written);

    // Defers `rcpts` of `m` with `dsn` (a 4.X.Y status; others become 4.0.0).
    void defer(Message& m, const std::vector<queuefile::Recipient>& rcpts, const core::Dsn& dsn);

  private:
    std::chrono::seconds ipc_timeout() const {
        return std::chrono::seconds(params_.qmgr_ipc_timeout);
    }
    awaitable<void> append(Message* m, queuefile::Recipient r, core::Dsn dsn);
    // Appends the records of `rcpts` one after another.
    awaitable<void> append_all(Message* m, std::vector<queuefile::Recipient> rcpts, core::Dsn dsn);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const WallClock& clock_;
    const FlushDomains& flush_domains_;
    std::function<void(Message&)> written_;
};

} // namespace cqmgr::qmgr
