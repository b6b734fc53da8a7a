// The event interface between the queue manager and its features: one
// list of observers, owned by the queue manager, hears of every delivery's
// start and end, of every queue's birth, window changes and freeing, and
// of every message's end, in that one shape.  Metrics and probes, the
// adaptive limits, destination shares, cluster limits and the destination
// state store are observers; none of them is wired to another.
//
// The rules (docs/design.md, "The event interface"):
//   - An observer is told in the order it was added to the list.
//   - A queue event arrives from inside a scheduler callback: an observer
//     changes nothing in the scheduler then, but asks CoreRequests, which
//     applies the change once the scheduler's call has returned (the core
//     panics on re-entry).  A delivery event arrives from the delivery
//     path, outside the scheduler.
//   - What an observer keeps per queue is made at queue_born() and goes at
//     queue_freed(): the scheduler frees every queue it made, by whatever
//     path, so nothing outlives its queue.
#pragma once

#include "clock.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <chrono>
#include <optional>
#include <vector>

namespace cqmgr::qmgr {

struct Message;

// One delivery, from the request to the reply: what the features learn of
// it.  The delivery's call holds it (no allocation per delivery); the
// agent's reply is converted into `result` once, and every observer reads
// that.
struct DeliveryEvent {
    // The daemon's clock, for an observer that needs the time.
    const WallClock* clock = nullptr;
    // The entry sent.  Alive until the scheduler hears of the end
    // (nullptr in delivery_reported()).
    core::Entry* entry = nullptr;
    // Its queue's deliveries in flight when it was sent, itself included.
    int busy_at_start = 0;
    // When the request went out (steady clock).
    std::chrono::steady_clock::time_point started{};
    // Kept by the adaptive limits at the start, for the end: where the
    // message's defer log ended, and when it was sent (Unix milliseconds;
    // -1: not taken).
    int64_t defer_mark = 0;
    int64_t started_ms = -1;
    // With the adaptive limits' provider scope, for a member: its group's
    // deliveries in flight when it was sent, itself included (0: none).
    int group_busy_at_start = 0;
    // Set at the start by an observer whose concurrency limit stands for
    // the receiver's sessions (ClusterLimits): the agent is not asked to
    // keep the session open for reuse, since a session idle in the
    // connection cache still counts at the receiver but not here.
    bool no_session_store = false;

    // ---- at the end ----
    // The outcome, as the scheduler is given it.  An observer may set
    // `result.unseen` (delivery_ended(): the adaptive limits).
    core::DeliveryResult result;
    // How long the request took.
    int64_t elapsed_us = 0;

    // The agent's hop status when it replied; none (empty status) when
    // the agent crashed or was not reached.
    const core::Dsn& hop() const {
        static const core::Dsn none;
        return result.kind == core::DeliveryResult::Kind::replied ? result.hop : none;
    }
    // The status for the delivery__end probe: the agent's, -1 for no valid
    // reply, -2 when the request never reached an agent.
    int probe_status() const {
        using K = core::DeliveryResult::Kind;
        return result.kind == K::unavailable ? -2 : result.kind == K::crashed ? -1 : result.status;
    }
};

// What a window change (Driver::queue_window) means for the destination.
enum class QueueTurn {
    none,    // a window step only
    died,    // declared dead (it was not)
    revived, // back from the dead
};

class DeliveryObserver {
  public:
    virtual ~DeliveryObserver() = default;

    // Entry `ev.entry` was selected and goes to an agent now.
    virtual void delivery_started(DeliveryEvent& ev) { (void)ev; }
    // The outcome is in `ev.result`; the scheduler hears of it next.
    virtual void delivery_ended(DeliveryEvent& ev) { (void)ev; }
    // The scheduler has taken the outcome (the entry is gone, and perhaps
    // its queue with it).
    virtual void delivery_reported(const DeliveryEvent& ev) { (void)ev; }

    // Queue `q` was created: what the observer keeps for it starts now.
    // It may narrow `gate`, the bound the queue starts with
    // (core::Limits::gate; none: no gate).
    virtual void queue_born(const core::Queue& q, std::optional<int>& gate) { (void)q, (void)gate; }
    // `q`'s window and accounts changed after a success or revival
    // (`positive`) or a failure; `turn` says whether it died or came back.
    virtual void queue_window(const core::Queue& q, bool positive, QueueTurn turn) {
        (void)q, (void)positive, (void)turn;
    }
    // Queue `q` is being freed: what the observer keeps for it goes.
    virtual void queue_freed(const core::Queue& q) { (void)q; }

    // Message `m` leaves the active queue (it is about to be destroyed).
    virtual void message_ended(const Message& m) { (void)m; }

    // Before each pass that starts deliveries: time-driven upkeep.
    virtual void before_selection(const WallClock& clock) { (void)clock; }
};

// The list, in order.  The observers outlive it.
class DeliveryObservers {
  public:
    void add(DeliveryObserver* o) {
        if (o) list_.push_back(o);
    }

    void delivery_started(DeliveryEvent& ev) {
        for (DeliveryObserver* o : list_)
            o->delivery_started(ev);
    }
    void delivery_ended(DeliveryEvent& ev) {
        for (DeliveryObserver* o : list_)
            o->delivery_ended(ev);
    }
    void delivery_reported(const DeliveryEvent& ev) {
        for (DeliveryObserver* o : list_)
            o->delivery_reported(ev);
    }
    std::optional<int> queue_born(const core::Queue& q) {
        std::optional<int> gate;
        for (DeliveryObserver* o : list_)
            o->queue_born(q, gate);
        return gate;
    }
    void queue_window(const core::Queue& q, bool positive, QueueTurn turn) {
        for (DeliveryObserver* o : list_)
            o->queue_window(q, positive, turn);
    }
    void queue_freed(const core::Queue& q) {
        for (DeliveryObserver* o : list_)
            o->queue_freed(q);
    }
    void message_ended(const Message& m) {
        for (DeliveryObserver* o : list_)
            o->message_ended(m);
    }
    void before_selection(const WallClock& clock) {
        for (DeliveryObserver* o : list_)
            o->before_selection(clock);
    }

  private:
    std::vector<DeliveryObserver*> list_;
};

} // namespace cqmgr::qmgr
