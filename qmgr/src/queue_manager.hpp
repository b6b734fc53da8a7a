// The queue manager proper: scans incoming and deferred, moves files into the
// active queue, reads and resolves their envelopes, hands recipients to the
// dispatcher, and when a message's last entry is done, finishes it exactly as
// stock qmgr does (bounce flush, expiry, delay warning, trace flush, then
// removal or deferral with a backoff time).
#pragma once

#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/queuefile/queue_layout.hpp"
#include "cqmgr/queuefile/queue_scanner.hpp"
#include "delivery.hpp"
#include "fast_flush.hpp"
#include "master_link.hpp"
#include "message.hpp"
#include "resolver.hpp"
#include "scheduler_config.hpp"

#include <memory>
#include <string>
#include <sys/types.h>
#include <unordered_map>

namespace cqmgr::qmgr {

// Scan request flags (trigger letters A and F).
namespace scan_flag {
inline constexpr int all = 1;   // ignore the not-before time (mtime)
inline constexpr int flush = 2; // ignore defer_transports
} // namespace scan_flag

// One pass over a queue directory, restartable.
struct Scan {
    std::string queue;
    queuefile::QueueScanner scanner = {}; // this pass, read as it goes
    bool running = false;
    bool restart = false; // another pass was asked for while this one ran
    int flags = 0;        // flags of the running pass
    int next_flags = 0;   // flags for the next pass
};

class QueueManager : public core::Driver {
  public:
    QueueManager(asio::io_context& io, const conf::MainCf& cf, const conf::QmgrParams& params,
                 const FlushDomains& flush_domains, MasterLink& master);

    // Moves leftovers from `active` back to `incoming`, starts both scans and
    // the periodic deferred scan.
    void start();
    // Handles the bytes of one trigger request.
    void on_trigger(std::string_view bytes);

  private:
    void request_scan(Scan& s, int flags);
    // Feeds messages from the scans into the active queue, one per loop pass.
    void schedule_feed();
    void feed();
    // Returns the next ready queue ID of `s`, or "" when the pass is over;
    // `mode` gets the file's mode as the readiness check saw it.
    std::string next_from_scan(Scan& s, mode_t& mode);
    void arm_deferred_timer();

    // core::Driver
    void refill(core::Message& m, int limit) override;
    void message_done(core::Message& m) override;
    void defer_recipients(core::Message& m, const std::vector<queuefile::Recipient>& rcpts,
                          const core::Dsn& dsn) override;
    void wakeup() override;
    void warn(const std::string& text) override;
    int active_messages() const override { return static_cast<int>(messages_.size()); }
    void queue_feedback(const core::Queue& q, bool positive, double step) override;
    void queue_window(const core::Queue& q, bool positive) override;

    // Moves a scanned file to active and reads it in; `mode` is from the scan.
    awaitable<void> activate(std::string id, std::string from_queue, int scan_flags, mode_t mode);
    // Reads the next batch of at most `limit` recipients (reopening the file
    // unless `fd` is given), resolves it and hands it to the scheduler.
    awaitable<bool> read_batch(Message& m, int limit, int fd = -1);
    // Resolves `rcpts` and assigns them to queues, all at once at the end.
    awaitable<void> assign_recipients(Message& m, std::vector<queuefile::Recipient> rcpts);
    // Starts the end-of-message work unless something is still in flight.
    void maybe_finish(Message& m);
    // Removes at once the file of a message that ends with nothing to
    // report; true when it did, and only forgetting the message is left.
    bool finish_now(Message& m);
    // Removes the finished message's file from active and logs "ID: removed".
    void remove_finished(const std::string& id);
    awaitable<void> finish(Message* m);
    // Logs and marks done a recipient that is the local double-bounce address.
    void discard_double_bounce(Message& m, const queuefile::Recipient& r);
    awaitable<void> append_deferral(Message* m, queuefile::Recipient r, core::Dsn dsn);
    void arm_scheduler_timer();
    // Renames active/ID to corrupt/ID, logging as stock does.
    void save_corrupt(const std::string& id);
    void remove_message(Message* m);
    // Logs a failed envelope read the way stock words each case.
    void log_read_error(const std::string& id, const std::string& path,
                        const queuefile::ReadResult& r);
    // Removes a finished queue file (or keeps it in saved/ with dont_remove).
    int remove_queue_file(const std::string& path);
    int64_t now() const;
    // An address as log lines show it (info_log_address_format).
    std::string log_addr(std::string_view addr) const;

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const FlushDomains& flush_domains_;
    MasterLink& master_;
    queuefile::QueueLayout layout_;
    Resolver resolver_;
    TransportSettings transport_settings_;
    core::Scheduler sched_;
    Delivery delivery_;
    asio::steady_timer sched_timer_;
    int64_t sched_timer_due_ = 0;
    Scan incoming_{.queue = "incoming"};
    Scan deferred_{.queue = "deferred"};
    bool feed_posted_ = false;
    bool feed_toggle_ = false;
    bool flush_mode_ = false; // an F trigger is in effect for defer_transports
    asio::steady_timer deferred_timer_;
    std::unordered_map<std::string, std::unique_ptr<Message>> messages_;
    int verify_probes_ = 0; // messages in memory that are address probes (MTA_VRFY)
};

} // namespace cqmgr::qmgr
