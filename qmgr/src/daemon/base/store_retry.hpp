// File operations on the queue that failed for a reason that may pass (a
// full file system, too many open files), tried again with backoff until
// they succeed or the file is gone.  Stock qmgr stops at such an error and
// its successor recovers the active queue; this daemon keeps running, so it
// must itself make sure that no file it took stays behind in active/.
#pragma once

#include "clock.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "warning_limiter.hpp"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

class StoreRetry {
  public:
    using Op = std::function<queuefile::StoreResult()>;
    using Done = std::function<void(const queuefile::StoreResult&)>;

    StoreRetry(asio::io_context& io, const WallClock& clock, WarningLimiter& limiter);

    // Runs `op` now and, while it fails for a reason other than the file
    // being gone, again after 1, 2, 4, ... up to 60 seconds.  Each failure is
    // a warning, rate-limited per `kind`; `done` gets the last result (empty,
    // or the file is gone).  `op` and `done` become std::functions only for
    // a retry: the common first-time success allocates nothing for them.
    template <class OpF, class DoneF> void run(std::string_view kind, OpF&& op, DoneF&& done) {
        queuefile::StoreResult r = op();
        if (!r || r->gone()) {
            done(r);
            return;
        }
        retry(kind, *r, Op(std::forward<OpF>(op)), Done(std::forward<DoneF>(done)));
    }
    // The same, where the last result only matters as a warning: the file
    // gone meanwhile is logged with the error's text.
    template <class OpF> void run(std::string_view kind, OpF&& op) {
        run(kind, std::forward<OpF>(op), warn_if_failed);
    }
    // For a retry that a coroutine makes itself: waits as long as run()
    // waits after the `failures`th failure in a row.
    awaitable<void> backoff(int failures);
    // Operations waiting for their next try.
    int pending() const { return pending_; }
    // Logs a failure of kind `kind` through the rate limiter.
    void report(std::string_view kind, const queuefile::StoreError& e);

  private:
    struct Attempt;
    // The `done` of the two-argument run().
    static void warn_if_failed(const queuefile::StoreResult& r);
    // After a first try of `op` failed with `e`: tries again later.
    void retry(std::string_view kind, const queuefile::StoreError& e, Op op, Done done);
    // Arms the next try of `a`.
    void schedule(std::shared_ptr<Attempt> a);

    asio::io_context& io_;
    const WallClock& clock_;
    WarningLimiter& limiter_;
    int pending_ = 0;
};

} // namespace cqmgr::qmgr
