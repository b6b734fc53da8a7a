// The scheduler core: Rak's preemptive job scheduler, per-transport
// recipient pools and the Postfix 2.5 concurrency feedback with dead-
// destination detection, and the bounds features place on destinations.
// It does no I/O and reads no clock: the daemon (or a test) tells it the
// time, feeds it recipients, asks it which transport needs a delivery agent
// and which entry to hand to an agent, and reports outcomes.  Broken
// invariants panic.
#pragma once

#include "cqmgr/core/limit_book.hpp"
#include "cqmgr/core/memory.hpp"
#include "cqmgr/core/panic.hpp"
#include "cqmgr/core/structures.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::core {

// What the scheduler needs from its driver.  refill() and message_done()
// are requests, which the driver may answer at once by calling the
// scheduler; every other callback is a notification, from inside which the
// driver changes nothing in the scheduler (Scheduler::in_callback()).
class Driver {
  public:
    virtual ~Driver() = default;
    // Read more recipients of `m` (at most `limit`), resolve and assign()
    // them, then call batch_done().  May complete later (asynchronously);
    // until then each peer of `m` whose only waiting entry is not full
    // holds that entry back, so that the batch can still top it up.
    virtual void refill(Message& m, int limit) = 0;
    // Every entry of `m` is finished: time for the end-of-message work.
    virtual void message_done(Message& m) = 0;
    // Entries that cannot go to the retry transport (it is dead itself, or
    // they were already there): the driver defers these recipients itself.
    virtual void defer_recipients(Message& m, const std::vector<Recipient>& rcpts,
                                  const Dsn& dsn) = 0;
    // Scheduling state changed in a way that may allow new deliveries.
    virtual void wakeup() {}
    // A warning for the administrator (logged with "warning: ").
    virtual void warn(const std::string&) {}
    // How many messages are in the active queue (for clog warnings).
    virtual int active_messages() const { return 0; }
    // Concurrency feedback, for destination_concurrency_feedback_debug:
    // `step` is about to be added to (positive) or taken from `q`'s success
    // or failure account.
    virtual void queue_feedback(const Queue& q, bool positive, double step) {
        (void)q, (void)positive, (void)step;
    }
    // `q`'s window and accounts after a success report or revival
    // (positive) or after a failure report.
    virtual void queue_window(const Queue& q, bool positive) { (void)q, (void)positive; }
    // With SchedulerConfig::verbose: one line about a scheduling decision
    // and its reason (logged with -v).
    virtual void trace(const std::string& line) { (void)line; }
    // An administrator's suspension (AdminKind::hold) or cap of `target`,
    // or a reply rule's action (AdminKind::rule), ended by itself; wakeup()
    // follows.
    virtual void admin_expired(AdminKind kind, const AdminTarget& target) {
        (void)kind, (void)target;
    }
    // A reply rule's bound on sender group `g`'s mail on `target` (one
    // queue; Scheduler::set_sender_rule) ended by itself at its `until`;
    // wakeup() follows.
    virtual void sender_rule_expired(const AdminTarget& target, SenderGroup g) {
        (void)target, (void)g;
    }
    // A queue was created: the gate it starts with (Limits::gate), none by
    // default.  The driver changes it later with Scheduler::set_limit().
    virtual std::optional<int> queue_gate(const Queue& q) {
        (void)q;
        return std::nullopt;
    }
    // A queue was created while some sender group's limit is counted per
    // provider (SenderPer::provider): the provider it belongs to, as a
    // small number of the driver's (0: none; sender_scope_key).  The driver
    // changes it later with Scheduler::set_queue_provider().  Called after
    // queue_gate().
    virtual uint32_t queue_provider(const Queue& q) {
        (void)q;
        return 0;
    }
    // Queue `q` is about to be freed (nothing left in it), by whatever
    // path: a delivery's end, its revival or rate-delay timer, a flush.
    // What the driver keeps for it (its gate, what it keeps by Queue::slot)
    // goes with it: the slot is given to the next queue created.
    virtual void queue_freed(const Queue& q) { (void)q; }
};

// The result of one delivery request, as the agent (or its failure) gave
// it: the shape the delivery client reports, unchanged.
struct DeliveryResult {
    enum class Kind {
        replied,     // the agent answered: `status` and `hop`
        unavailable, // the request never reached an agent (the transport is dead)
        crashed,     // no valid reply: I/O error, garbage, timeout (deferral, no feedback)
    };
    Kind kind = Kind::replied;
    int status = 0; // agent status: 0 = all recipients finished
    Dsn hop;        // hop status; empty status = none
    // The driver knows that no receiver saw this delivery: its agent
    // deferred the entry without taking a recipient in hand (no hop status
    // and no deferral record of its own), as an agent does when the queue
    // file is gone (postsuper -r moved it away while its entries waited
    // here).  Stock sees such a reply as any deferral; only a learned rate
    // delay, which paces what the receiver sees, does not follow it.
    bool unseen = false;

    bool crashed() const { return kind == Kind::crashed; }
};

// The hop status of a transport whose agents cannot be reached.
inline Dsn transport_unavailable() {
    return {"4.3.0", "mail transport unavailable"};
}

struct Core;

// The driver's view of the scheduler.  The work is done by its units
// (qmgr/core/src: Transports, Queues, Jobs, Entries, Selection,
// LimitControl), which share one Core; this class is what a driver needs.
class Scheduler {
  public:
    using TransportConfigFn = std::function<TransportConfig(const std::string&)>;

    Scheduler(SchedulerConfig cfg, TransportConfigFn transport_cfg, Driver& driver);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Every call below that changes anything panics when made from inside
    // a notification of the driver (every Driver callback but refill() and
    // message_done(), which it may answer at once): the core is halfway
    // through an operation of its own then.  A driver that wants a change
    // from there queues it until the core's call has returned.
    // Whether such a notification is running now.
    bool in_callback() const;

    // ---- time ----
    // Sets the current time (seconds) and runs timers that are due.
    void set_time(int64_t now);
    int64_t now() const;
    // When the next timer is due, if any.
    std::optional<int64_t> next_timer() const;

    // ---- messages and recipients ----
    // Enters a message into the active queue (its enqueue time is now).
    void message_add(Message& m);
    // How many recipients to read in the first batch of a new message.
    int first_batch_limit(const Message& m) const;
    // How many recipients to read in any later batch of `m` (a refill, or
    // the next batch at the message's end): the recipient slots it holds
    // and does not use, as stock sizes every reread.  Panics when it holds
    // none (the caller reads only when it has room).
    int reread_limit(const Message& m) const;
    // Finds or creates a transport.
    Transport& transport(const std::string& name);
    // The queue for a recipient: `name` on `t`, or, when `t` or that queue is
    // dead, the retry transport's queue named after the reason.
    Queue& queue_for(Transport& t, const std::string& name, const std::string& nexthop);
    // Like queue_for(), but where the recipient would go to the retry
    // transport and that transport (or its queue for the reason) is dead
    // too, returns nullptr and sets `reason`: the caller defers the
    // recipient itself, as stock qmgr does while resolving.  With
    // `flush_each` (the message was flushed on its own), a dead `t` and a
    // dead queue `name` are revived first.
    Queue* route(Transport& t, const std::string& name, const std::string& nexthop, Dsn& reason,
                 bool flush_each = false);
    // Adds one recipient of `m` for queue `q`.
    void assign(Message& m, Queue& q, Recipient r);
    // After a batch was read and assigned: `has_unread` and `rcpt_unread`
    // describe what is left in the file.
    void batch_done(Message& m, bool has_unread, int rcpt_unread);
    // Forgets a message whose entries are all done (after message_done).
    void message_free(Message& m);

    // ---- selection and outcomes ----
    // A transport that needs one more delivery agent connection, or nullptr.
    // Round-robin over the transports (a new one comes first), skipping dead
    // and rate-locked ones and those with two connections pending; a
    // transport qualifies when its ready queues have, within their windows,
    // a waiting entry for each pending connection and one more.  Entries
    // held back for a refill do not count.  The transport's pending count
    // goes up; call connection_ready() or connection_failed() later.
    Transport* select_transport();
    void connection_ready(Transport& t);
    // A connection (or the agent's announcement) failed: the transport is
    // declared dead and its waiting entries go to the retry transport.
    void connection_failed(Transport& t, const Dsn& dsn);
    // The next entry to hand to an agent of `t`, or nullptr (close it):
    // only when the work went elsewhere since select_transport().  An
    // entry held back for a refill goes rather than none.  With a transport
    // rate delay, the driver waits that long after connection_ready()
    // before asking; an empty answer releases the rate lock.
    Entry* select_entry(Transport& t);
    // Reports the outcome of a selected entry and frees it; an entry whose
    // request never reached an agent waits again and its transport is dead.
    void delivery_done(Entry* e, const DeliveryResult& r);
    // Gives a selected entry back without an attempt (e.g. the request could
    // not even be written): it goes to the end of its queue's todo list and
    // the front of its peer's, as in stock.
    void entry_unselect(Entry* e);

    // ---- limits (limits.hpp) ----
    // Makes `change` to a bound of what `target` names; an empty value
    // removes the bound.  A hold (of a transport, a queue, or a queue
    // name on every transport), a cap (of a queue or a queue name), a
    // learned limit and a lowered share (of one queue: 0 gives back its
    // transport's full share) and a rule's action (of a queue or of every
    // queue of a transport) are kept by name in limits(), so that a queue
    // created later picks them up; a hold, a cap or a rule's action with
    // `until` ends by itself then (Driver::admin_expired).  A queue covered both by its
    // own target and by its bare name takes its own.  A gate belongs to the
    // one queue `target` names, if it exists, and goes with it.  Every
    // change reaches the queues it covers (Queue::limits) at once, lets
    // jobs waiting for them go again, and wakes the driver.  Returns
    // whether anything changed.  Panics on a bound that cannot name
    // `target` (LimitBook::set).
    bool set_limit(const AdminTarget& target, const LimitChange& change);
    // The same for queue `q`, named by its transport and name (for the
    // driver that holds the queue: its gate, without a lookup).
    bool set_limit(Queue& q, const LimitChange& change);
    // What is kept by name.
    const LimitBook& limits() const;
    // The limit of sender group `g` (not 0), for the messages given that
    // group (Message::sender_group) from now on: set once for the
    // scheduler's life (another limit for the same group panics).  A
    // group whose limit limits nothing is no group.
    void set_sender_limit(SenderGroup g, const SenderLimit& limit);
    // A reply rule's bound on sender group `g`'s mail on queue
    // `target.queue` of transport `target.transport` (both named): a hold,
    // a cap or a pause after each delivery (RuleLimit) of that group's
    // mail alone, while other mail to the destination goes on; an empty
    // value removes it.  Kept by name, as set_limit()'s rules are, so that
    // the group's mail there later picks it up; with `until` it ends by
    // itself then (Driver::sender_rule_expired).  A group with a rule is
    // counted as a limited group from then on, even without a limit of its
    // own (set_sender_limit() must come first, if at all).  Lets jobs
    // passed over go again and wakes the driver.  Returns whether anything
    // changed.  Panics on a target without a queue, group 0, or an empty
    // or negative limit.
    bool set_sender_rule(const AdminTarget& target, SenderGroup g, std::optional<RuleLimit> rule);
    // Queue `q` now belongs to provider `provider` (the driver's number; 0:
    // none), the scope of the sender limits counted per provider: its
    // groups' mail there counts, from now on, in the load of the new
    // scope, and takes its deliveries in flight with it (the new scope's
    // concurrency may be exceeded until they end).  Nothing changes while
    // no group's limit is per provider.
    void set_queue_provider(Queue& q, uint32_t provider);

    // ---- dead destinations, flushes, memory ----
    // Declares queue `q` dead until `until` with `dsn`, as if it had failed
    // a whole cohort (its waiting entries go to the retry transport), for
    // a death another host found (a shared dead mark).  Does nothing to a
    // queue that is dead already or pausing for its rate delay.
    void queue_mark_dead(Queue& q, const Dsn& dsn, int64_t until);
    // Revives every dead transport and queue at once (postqueue -f's F).
    // A live transport keeps its rate lock.
    void flush_dead();
    // Revives the dead queues `target` covers now, and their dead
    // transports, through the one revival path (the backoff and cohort
    // state start afresh, as when a dead queue's time is up).  Returns what
    // was revived: transports as {name, ""}, queues as {transport, queue}.
    std::vector<AdminTarget> admin_flush(const AdminTarget& target);
    // Destinations remembered from an earlier run (memory.cpp).  Creates
    // queue `name` of `transport` dead until `until` for `dsn`, as if it
    // had died in this run with that revival time: its recipients go to
    // the retry transport with the reason, and nothing is sent to it
    // until then (or until a flush revives it); `until` is cut to
    // minimal_backoff_time from now.  Does nothing (nullptr) when the
    // queue exists, `until` is not in the future, or `transport` is the
    // retry transport.
    Queue* queue_restore_dead(const std::string& transport, const std::string& name,
                              const std::string& nexthop, const Dsn& dsn, int64_t until);
    // Keeps `memory` for the next creation of queue `name` of `transport`:
    // its window starts at the remembered one (capped by the transport's
    // destination concurrency limit) instead of initial_destination_
    // concurrency, and with a destination rate delay it first waits out
    // what is left of the delay after its last delivery.
    void queue_remember(const std::string& transport, const std::string& name,
                        const QueueMemory& memory);

    // ---- inspection ----
    // The queue `name` of transport `transport`, if it exists.
    Queue* find_queue(const std::string& transport, const std::string& name) const;
    // The queues that exist now and that `target` covers (a whole
    // transport: all of its queues).
    std::vector<Queue*> admin_queues(const AdminTarget& target) const;
    int recipient_count() const;
    int queue_count() const;
    const std::map<std::string, std::unique_ptr<Transport>>& transports() const;
    // Checks every invariant and panics on the first broken one (tests).
    void check_invariants() const;

  private:
    // Tests reach the units through it (qmgr/core/tests/core_access.hpp).
    friend struct SchedulerAccess;

    std::unique_ptr<Core> c_;
};

// Priority lanes (lanes.cpp).  The most deliveries of mail other than
// urgent that transport `t` may have in flight (its process limit less the
// urgent reserve), or -1 for no such cap.
int lane_cap(const Transport& t);
// Deliveries of normal and bulk mail in flight on `t`.
int lane_other_busy(const Transport& t);
// True when mail other than urgent has less than its share (bulk_share) of
// the deliveries in flight on `t`.
bool lane_owed(const Transport& t);
// True when mail other than urgent is at its cap on `t`.
bool lane_capped(const Transport& t);
// Whether some urgent entry of `t` could start a delivery now: an entry of
// an urgent job, not held back for a refill, whose queue has room within
// every bound.
bool urgent_waits(const Transport& t);
// True when the urgent reserve binds on `t`: other mail is at its cap and
// urgent mail waits for an agent, so only urgent mail may have one (the
// reserve is work-conserving, lanes.cpp).
bool lane_reserve_binds(const Transport& t);

// Destination shares (share.cpp): the most deliveries one queue of `t` may
// have in flight, its process limit times dest_share percent (at least 1),
// or 0 for no cap.
int share_full(const Transport& t);
// The rule that decides when a queue's share binds (share.cpp): bits, so
// that Transport::share_blocked can hold several.
enum ShareKind : uint8_t {
    share_whole = 1,   // its full share, earned: binds while another waits
    share_lowered = 2, // lowered: also while a queue with a whole share wants an agent
    share_earning = 4, // still earning it (slow start): while another wants one
};
ShareKind share_kind(const Queue& q);
// What the queues of one transport want, as the shares see it, computed
// when first asked and kept for one selection (the state changes only
// with a selection or a delivery's end).
struct ShareDemand {
    bool known = false;
    bool waits = false;  // some queue could start a delivery within its share
    int wants = 0;       // queues that could use one more agent, shares aside
    int whole_wants = 0; // of those, the ones with a whole share (or none)
    void compute(const Transport& t);
};
// Whether some queue of `t` could start a delivery now within every bound,
// its share included.
bool destination_waits(const Transport& t);
// Whether queue `q`'s share binds, given what the queues of its transport
// want (`d`, computed).
bool share_binds(const Queue& q, const ShareDemand& d);
// The room queue `q` has for new deliveries: within its share while its
// share binds, up to its other bounds otherwise.  `d` is computed when
// first needed, for a caller that asks of many queues.
int share_room(const Queue& q, ShareDemand& d);
// A delivery of `q` went through: it earns more of its share.
void share_earn(Queue& q);

} // namespace cqmgr::core
