// Taking a message in: claiming its file (move to active, open, lock),
// reading its envelope and a batch of recipients, resolving each recipient
// through trivial-rewrite, routing it (routing.hpp), and assigning the
// batch to the scheduler.  Later batches, asked for by the scheduler's
// refills or by the end of the message, are read and assigned the same way.
// The coordinator owns the message and its phase; this part only reads and
// assigns.
#pragma once

#include "clock.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "cqmgr/queuefile/header_block.hpp"
#include "message.hpp"
#include "priority_class.hpp"
#include "resolver.hpp"
#include "routing.hpp"
#include "sender_groups.hpp"
#include "store_retry.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

class Intake {
  public:
    // How the coordinator defers recipients that cannot be routed at all.
    using DeferFn =
        std::function<void(Message&, const std::vector<queuefile::Recipient>&, const core::Dsn&)>;

    Intake(const conf::QmgrParams& params, const WallClock& clock,
           const queuefile::ActiveQueue& store, StoreRetry& retry, Resolver& resolver,
           core::Scheduler& sched, DeferFn defer);

    // The result of claiming a ready file.
    struct Claimed {
        std::unique_ptr<Message> message; // null: not taken
        bool pause = false;               // not taken for a file-system error
        bool corrupt = false;             // not taken: the file is damaged (quarantine it)
        bool keep_defer_log = false;      // force-expired with reasons on file: end it now
    };
    // Claims `id` from `queue` and reads its envelope and first batch.  From
    // "active" (a file a previous queue manager left there), a file still
    // locked by an agent goes back to incoming, to be skipped there.
    Claimed claim(const std::string& id, const std::string& queue, int scan_flags, mode_t mode);

    // A batch of recipients on its way from the queue file to the
    // scheduler: where each one goes, worked out one recipient after the
    // other, then all assigned at once.
    struct Batch {
        // Where one recipient goes.  Only what assigning needs: a batch may
        // hold 5,000 of these.
        struct Target {
            std::string transport, nexthop, queue;
            queuefile::Recipient rcpt;
        };
        std::vector<queuefile::Recipient> rcpts;
        std::vector<Target> targets;
        std::size_t next = 0; // the next recipient to route
        RouteContext context;
        bool trace_only = false;
        bool redirect_pending = false; // the redirect address is not resolved yet
        const char* request_class = "resolve";
    };
    // Resolves, routes and assigns the recipients read last, as far as that
    // can be done now: true when the whole batch is assigned (every answer
    // came from the resolver's cache or a content filter), false when an
    // answer from trivial-rewrite is needed, and assign_rest(m, b) must
    // finish it.  Stock does all of it at once; a coroutine per batch
    // cost more than the rest of taking a message in.
    bool assign_now(Message& m, Batch& b);
    // Finishes what assign_now(m, b) began, asking trivial-rewrite.
    awaitable<void> assign_rest(Message& m, Batch b);
    // What became of reading a later batch.
    enum class BatchRead {
        ok,     // read: assign it
        failed, // damaged, or the file is gone: the message ends in corrupt/
        again,  // the file could not be opened for now (EMFILE, EIO...)
    };
    // Reads the next batch of at most `limit` recipients.
    BatchRead read_batch(Message& m, int limit);

    // The message leaves memory.
    void forget(const Message& m);
    // The priority lanes' tables (cqmgr_priority_maps and
    // cqmgr_priority_header_maps, opened before the jail): each message
    // claimed from now on is classified.
    void use_priorities(PriorityTables tables) { priorities_ = std::move(tables); }
    // The sender limits' tables (cqmgr_sender_limits, opened before the
    // jail): each message claimed from now on is given its sender group.
    void use_senders(SenderGroups tables) { senders_ = std::move(tables); }
    // The sender groups (for explain).
    const SenderGroups& senders() const { return senders_; }
    // The name of sender group `g` ("" for none; SenderGroups::name_of).
    const std::string& sender_group_name(core::SenderGroup g) const { return senders_.name_of(g); }
    // The number of the sender group named `name`, numbered now if need
    // be (SenderGroups::number; 0: none).
    core::SenderGroup sender_group_number(const std::string& name) {
        return senders_.empty() ? 0 : senders_.number(name, sched_);
    }
    // Messages whose recipients reached the scheduler, the one being
    // assigned now included.  Stock reads, resolves and assigns a message
    // before it takes the next, so this is the active queue's size as stock
    // counts it, which the clog warning shows; messages still waiting for
    // the resolver here are not in it yet.
    int admitted() const { return admitted_; }

  private:
    // After a claim of `id` from `queue` failed at step `c.step`: logs it
    // as stock does and puts the file where it waits.  True when feeding
    // pauses (a file-system error, not the file's own state).
    bool not_claimed(const std::string& id, const std::string& queue,
                     const queuefile::ActiveQueue::Claim& c);
    // Routes the batch's recipients from `b.next` on while the resolver's
    // cache (or the content filter) answers, then assigns the batch; false
    // at the first recipient that needs trivial-rewrite.
    bool route_known(Message& m, Batch& b);
    // Routes recipient `rcpt` of the batch by `route`.
    void place(Message& m, Batch& b, queuefile::Recipient& rcpt, Route route);
    // Assigns the routed batch, against the scheduler's state now.
    void assign_targets(Message& m, Batch& b);
    // The lane of message `m`, whose first batch was just read (its header
    // lines are read from its open file only if a table needs them).
    core::Lane classify(const Message& m, queuefile::HeaderLinesOnce& headers) const;
    // Logs a failed envelope read the way stock words each case.
    void log_read_error(const std::string& id, const queuefile::ReadResult& r) const;
    // Logs and marks done a recipient that is the local double-bounce address.
    void discard_double_bounce(Message& m, const queuefile::Recipient& r) const;
    // An address as log lines show it (info_log_address_format).
    std::string log_addr(std::string_view addr) const;

    const conf::QmgrParams& params_;
    const WallClock& clock_;
    const queuefile::ActiveQueue& store_;
    StoreRetry& retry_;
    Resolver& resolver_;
    core::Scheduler& sched_;
    DeferFn defer_;
    PriorityTables priorities_;
    SenderGroups senders_;
    int verify_probes_ = 0; // messages in memory that are address probes (MTA_VRFY)
    int admitted_ = 0;
    // Counts `m` as admitted, once.
    void admit(Message& m);
};

} // namespace cqmgr::qmgr
