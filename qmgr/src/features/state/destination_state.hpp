// The daemon's side of the destination state store (cqmgr_state_database):
// what it remembers about each destination, how that survives a restart,
// and when it is written.
//
// At start-up the store's records are loaded and handed to the scheduler:
// a destination that was dead and whose dead time is not over comes back
// dead with the same reason until then; a healthy one's next queue starts
// at its last window; a limit the adaptive limits learned comes back if
// its transport still learns limits and it is not yet forgotten.  While
// running, the scheduler's window changes, deaths and revivals
// (Driver::queue_window), the adaptive limits' changes and the ends of
// deliveries update the record in memory, and a change of what is kept
// marks it changed; at most once a second the changed records go to the
// writer thread (state_writer.hpp) as one batch.  The end of a delivery
// marks the record only when its outcome's status differs from the last,
// where a destination rate delay counts from it, or once a minute:
// otherwise a busy destination would be written every second for its
// delivery times alone.  A death or a revival goes to the writer at once (the
// loop does not wait for its commit, a few milliseconds), so that a queue
// manager killed soon after the death still leaves it in the store.  At a clean shutdown
// whatever is left is committed before the process exits.  The retry
// transport's queues are not kept: they are named after reasons, not
// destinations.  When the store replaced a damaged file while running,
// every record in memory is handed over again.
#pragma once

#include "clock.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/state/store.hpp"
#include "delivery_observer.hpp"
#include "state_writer.hpp"

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

// How long a record is kept without a change: the longest backoff, and
// at least a day.
int64_t state_horizon(const conf::QmgrParams& params);

class DestinationState : public DeliveryObserver {
  public:
    // Keeps nothing: every call does nothing.
    DestinationState(asio::io_context& io, const WallClock& clock);
    // Keeps the state in `store` (state_open.hpp; nullptr: nothing).
    // Records not changed for `horizon` seconds are dropped at start-up
    // and, while running, once an hour (state_writer.hpp).
    DestinationState(asio::io_context& io, const WallClock& clock,
                     std::shared_ptr<state::Store> store, int64_t horizon,
                     std::string retry_transport);
    ~DestinationState();
    DestinationState(const DestinationState&) = delete;
    DestinationState& operator=(const DestinationState&) = delete;

    bool enabled() const { return store_ != nullptr; }
    // For the metrics: whether the store is open and its last commit went
    // through, and the commits so far.
    bool usable() const { return writer_ && !writer_->failing(); }
    size_t commits() const { return writer_ ? writer_->commits() : 0; }

    // The receiver's reply that taught a learned limit: its class's name,
    // its enhanced status and text (all empty: not known).
    struct LearnedReply {
        std::string cls, status, text;
    };
    // Offered each stored learned limit at restore(), with when it was
    // learned (Unix seconds) and the reply that taught it; whether it was
    // taken up.
    using LearnedRestore =
        std::function<bool(const core::AdminTarget& target, const core::LearnedLimit& limit,
                           int64_t learned_at, const LearnedReply& reply)>;

    // Loads the store and hands the scheduler what it remembers, and
    // `learned` the learned limits (none taken up if it is empty), then
    // starts keeping changes (nothing is kept before).  Returns the queues
    // restored dead.
    std::vector<const core::Queue*> restore(core::Scheduler& sched,
                                            const LearnedRestore& learned = {});
    // `q`'s window changed, or it died, or it came back.  A death or a
    // revival is handed to the writer at once.
    void queue_changed(const core::Queue& q);
    // The adaptive limits learned `limit` for `target` from `reply`, or
    // forgot it (!limit.any()).
    void learned_changed(const core::AdminTarget& target, const core::LearnedLimit& limit,
                         const LearnedReply& reply);
    // A delivery to `q` ended; `hop` is the agent's hop status (empty
    // status: none, e.g. the agent crashed).
    void delivery_ended(const core::Queue& q, const core::Dsn& hop);
    // DeliveryObserver: the end of each delivery that reached an agent,
    // and each window change, death or revival, as above.
    void delivery_ended(DeliveryEvent& ev) override {
        if (ev.result.kind != core::DeliveryResult::Kind::unavailable)
            delivery_ended(*ev.entry->queue, ev.hop());
    }
    void queue_window(const core::Queue& q, bool, QueueTurn) override { queue_changed(q); }
    // Queue `q` is being freed (Driver::queue_freed): its slot no longer
    // leads to its record.
    void queue_freed(const core::Queue& q) override {
        if (q.slot < by_slot_.size()) by_slot_[q.slot] = nullptr;
    }
    // Clean shutdown: commits every change and waits for it.
    void finish();

    // A record in memory, and whether it changed since the last batch.
    struct Kept {
        state::DestinationRecord record;
        bool changed = false;
    };
    // The records in memory (tests).
    const std::unordered_map<std::string, Kept>& records() const { return records_; }
    // Hands the changed records to the writer now (tests).
    void flush();
    // Forgets, in memory only, the records of destinations that have no
    // queue now and have not changed for `idle` seconds (they stay in the
    // store), so that memory follows the destinations in use, not every
    // destination ever seen.  flush() does this once a minute.
    void forget_idle(int64_t idle);
    // Waits until the writer has committed what it was handed (tests).
    void drain() {
        if (writer_) writer_->drain();
    }
    // Marks every record in memory changed and hands them over: the store
    // replaced a damaged file and holds none of them.
    void resync();

  private:
    // The record of `q` (made when new), not marked; nullptr for queues
    // not kept.
    using Records = std::unordered_map<std::string, Kept>;
    Records::value_type* node(const core::Queue& q);
    // The same by name (the queue may be gone).
    Records::value_type* node(const std::string& transport, const std::string& destination);
    // The record of `q`, marked changed; nullptr for queues not kept.
    state::DestinationRecord* touch(const core::Queue& q);
    // The same by name (the queue may be gone).
    state::DestinationRecord* touch(const std::string& transport, const std::string& destination);
    void log_writer_warnings();
    // Whether the scheduler has a queue for `r` now.
    bool has_queue(const state::DestinationRecord& r) const;

    const WallClock& clock_;
    int64_t horizon_ = 0;
    std::string retry_transport_;
    Records records_;
    // The record of each live queue that has one, by Queue::slot (nodes
    // stay put, and forget_idle() keeps the records of live queues), so
    // that a delivery finds it without building its key.
    std::vector<Records::value_type*> by_slot_;
    // The changed records, by their place in records_ (nodes stay put, and
    // forget_idle() leaves changed ones alone); each once, by its flag.
    std::vector<Records::value_type*> changed_;
    // Marks `kv` changed now.
    state::DestinationRecord& mark(Records::value_type& kv);
    std::string key_; // touch()'s key, kept for its capacity
    asio::steady_timer timer_;
    bool armed_ = false;
    const core::Scheduler* sched_ = nullptr; // set by restore()
    int64_t next_forget_ = 0;
    std::shared_ptr<state::Store> store_;
    std::unique_ptr<StateWriter> writer_;
    // Handed to the writer's thread, which posts resync() to the loop:
    // expired once this object is gone.
    std::shared_ptr<DestinationState*> self_;
};

} // namespace cqmgr::qmgr
