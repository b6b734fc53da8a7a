// The scheduler's in-memory structures, in Postfix's vocabulary:
//
//   Message   one queue file in the active queue
//   Transport a master.cf delivery service (smtp, local, ...)
//   Queue     one destination (nexthop) of one transport
//   Job       one message within one transport
//   Peer      one message's entries for one queue (job x queue)
//   Entry     up to <transport>_destination_recipient_limit recipients of one
//             message for one queue: what one delivery request carries
//
// Lists are Boost.Intrusive lists with safe-mode hooks, so linking an object
// twice or destroying it while linked is caught.  Ownership: the Scheduler
// owns transports; a transport owns its queues and jobs; a job owns its
// peers; entries are owned by the scheduler through their peer and freed
// when done.  Messages are owned by the caller.
#pragma once

#include "cqmgr/common/recipient.hpp"
#include "cqmgr/core/admin.hpp"
#include "cqmgr/core/feedback.hpp"
#include "cqmgr/core/limits.hpp"
#include "cqmgr/core/peer_index.hpp"
#include "cqmgr/core/pooled.hpp"
#include "cqmgr/core/sender.hpp"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cqmgr::core {

namespace bi = boost::intrusive;
using Hook = bi::list_member_hook<bi::link_mode<bi::safe_link>>;

// The recipients the core groups into entries, as the queue-file reader
// made them (cqmgr/common/recipient.hpp).
using Recipient = cqmgr::Recipient;

template <class T, Hook T::*H>
using List = bi::list<T, bi::member_hook<T, Hook, H>, bi::constant_time_size<true>>;
// A list without a count, for lists in every job (one per message in core),
// whose size nobody asks.
template <class T, Hook T::*H>
using UncountedList = bi::list<T, bi::member_hook<T, Hook, H>, bi::constant_time_size<false>>;
using SetHook = bi::set_member_hook<bi::link_mode<bi::safe_link>, bi::optimize_size<true>>;

struct Transport;
struct Queue;
struct Job;
struct Peer;
struct Entry;

// A message's priority lane (cqmgr_priority_maps): urgent mail is selected
// before all other mail of its transport; normal and bulk mail go through
// Rak's scheduler as stock's mail does.  See lanes.cpp.
enum class Lane : uint8_t { urgent, normal, bulk };
inline constexpr int lane_count = 3;
inline const char* lane_name(Lane l) {
    return l == Lane::urgent ? "urgent" : l == Lane::bulk ? "bulk" : "normal";
}

// How a transport chooses which job's entry an agent gets next
// (cqmgr_scheduler_policy): Rak's preemption with delivery slots (stock's),
// or each job's concurrency scaled by the free agents (finch.cpp).
enum class SchedulerPolicy : uint8_t { rak, finch };

// A delivery status with which recipients are deferred (RFC 3463 + text).
struct Dsn {
    std::string status;
    std::string reason;
    bool operator==(const Dsn&) const = default;
};

// Per-transport settings (main.cf `<transport>_*` with `default_*` fallbacks).
struct TransportConfig {
    int dest_concurrency_limit = 20; // 0 = no limit
    int init_dest_concurrency = 5;
    int dest_recipient_limit = 50;    // recipients per entry; 0 = no limit
    int recipient_limit = 20000;      // in-core recipient pool
    int extra_recipient_limit = 1000; // pool extension for preempting jobs
    int refill_limit = 100;
    int refill_delay = 5;
    int slot_cost = 5;
    int slot_loan = 3;
    int slot_discount = 50; // percent
    int min_slots = 3;
    int fail_cohort_limit = 1; // 0 = never declare a destination dead
    Feedback pos_feedback;
    Feedback neg_feedback;
    int dest_rate_delay = 0;      // seconds between deliveries per queue
    int transport_rate_delay = 0; // seconds between deliveries per transport
    // Postfix 3.7 moves the window as soon as the accumulated feedback is
    // within half a step of the hysteresis ("prepare for overshoot"); with
    // constant feedback that makes the first negative step of a cycle a
    // double step.  false gives Postfix's published pseudocode instead,
    // which is what its published measurements describe
    // (docs/postfix-facts.md §10.7, §10.9).  Only the simulator sets it.
    bool overshoot_guard = true;
    // Priority lanes (lanes.cpp): the transport's process limit (master.cf
    // maxproc; 0 = unknown, no reserve), the percentage of it kept free of
    // mail other than urgent (cqmgr_urgent_agent_share), and the
    // percentage of the deliveries in flight that mail other than urgent
    // keeps while it has mail waiting, however much urgent mail waits
    // (cqmgr_bulk_agent_share).
    int process_limit = 0;
    int urgent_share = 0;
    int bulk_share = 0;
    // Destination shares (share.cpp): the percentage of the process limit
    // that one queue may have in flight (cqmgr_destination_agent_share;
    // 0 = no cap).
    int dest_share = 0;
    // The job selection policy (finch.cpp).  With finch, a job may take
    // one more delivery while it has fewer than finch_message_concurrency
    // in flight, or fewer than finch_scale times the places that would
    // still be free after it, both among the transport's agents
    // (process_limit, when known) and in the entry's destination window.
    SchedulerPolicy policy = SchedulerPolicy::rak;
    int finch_message_concurrency = 1;
    int finch_scale = 10;
};

// Global settings.
struct SchedulerConfig {
    int message_recipient_limit = 20000; // qmgr_message_recipient_limit
    int message_recipient_minimum = 10;  // qmgr_message_recipient_minimum
    int minimal_backoff_time = 300;      // how long a dead queue stays dead
    int transport_retry_time = 60;       // how long a dead transport stays dead
    std::string retry_transport = "retry";
    // Clog warnings (helpful_warnings, qmgr_clog_warn_time; 0 = off).
    int clog_warn_time = 300;
    int message_active_limit = 20000;
    // Debugging: check every indexed preemption candidate search against the
    // reference scan of the job list, and panic when they differ (tests).
    bool verify_candidates = false;
    // -v: tell the driver every scheduling decision (Driver::trace).
    bool verbose = false;
};

// A message's jobs, one per transport it uses, chained through the jobs
// themselves (Job::next_job) in the order they were made.  A message nearly
// always has one, and a vector in each message cost 32 bytes.
class JobChain {
  public:
    class iterator {
      public:
        explicit iterator(Job* j) : j_(j) {}
        Job* operator*() const { return j_; }
        iterator& operator++();
        bool operator==(const iterator&) const = default;

      private:
        Job* j_;
    };
    iterator begin() const { return iterator(first_); }
    iterator end() const { return iterator(nullptr); }
    bool empty() const { return !first_; }
    // Appends `j` (not on any chain).
    void push_back(Job* j);
    // Unchains every job and returns the first (the rest follow it).
    Job* release();

  private:
    Job* first_ = nullptr;
};

// Bits of Message::flags, stock's "delivery problems" word: nonzero at the
// end means that some recipient is to be tried again, so the message is
// deferred rather than removed.
namespace message_flag {
// Some recipient must be retried (stock's DELIVER_STAT_DEFER).
inline constexpr int defer = 1;
} // namespace message_flag

// The scheduler's view of a message.  The daemon derives its own message
// (envelope, file state) from this.  Not polymorphic (no table pointer in
// each of up to 20,000 messages): whoever makes a message owns and destroys
// it as the type it made, and the scheduler only refers to it.
struct Message {
    std::string id;
    int64_t queued_time = 0;
    int refcount = 0;    // entries in core
    int flags = 0;       // message_flag bits; nonzero: some recipient must be retried
    int rcpt_count = 0;  // recipients in core
    int rcpt_limit = 0;  // recipient slots lent to this message
    int rcpt_unread = 0; // estimate of recipients not read yet
    // The flags share a byte, so that the lane and the sender group fit in
    // the word they share with them.
    bool has_unread : 1 = false;     // more recipients wait in the queue file
    bool single_rcpt : 1 = false;    // VERP: one recipient per entry
    bool refill_pending : 1 = false; // Driver::refill asked, batch_done not yet come
    Lane lane = Lane::normal;        // set before the first assign(), never changed
    // Its sender group (sender.hpp; 0 = none), set before the first
    // assign(), never changed.
    SenderGroup sender_group = 0;
    int64_t refill_time = 0; // when the last batch was done
    JobChain jobs;           // one per transport
};

struct Entry : Pooled<Entry> {
    Message* message = nullptr;
    Peer* peer = nullptr;
    Queue* queue = nullptr;
    // Most entries carry one recipient (one-recipient mail, VERP, or one
    // per destination): it is held in place, without a block of its own.
    boost::container::small_vector<Recipient, 1> rcpts;
    Hook queue_hook; // on queue->todo or queue->busy
    Hook peer_hook;  // on peer->entries while in todo
};

struct Peer : Pooled<Peer> {
    Job* job = nullptr;
    Queue* queue = nullptr;
    int refcount = 0; // entries of this peer, todo or busy
    // Its job's sender group's part on its queue (SenderBook::part), 0
    // for none: mail of no limited group.
    uint32_t sender = 0;
    List<Entry, &Entry::peer_hook> entries; // todo entries
    // Its only waiting entry, while that entry is not full and the
    // message's refill is being read: held back so that the refill can
    // still top it up (peer_hold_update).
    Entry* held = nullptr;
    Hook job_hook;
};

// One sender group's mail in one scope of a transport (sender.cpp): what
// it has in delivery there, and the state of its rate.  Owned by the
// transport's SenderBook; it lives while the group has mail on a queue of
// the scope (a SenderPart), and after that while its rate still remembers
// recent starts.  The scope is the group's limit's (SenderLimit::per): one
// destination, or every queue of one provider (Queue::provider;
// sender_scope_key).
struct SenderLoad {
    SenderGroup group = 0;
    SenderLimit limit; // the group's (fixed once set)
    std::string key;   // its key in SenderBook::by_key
    int parts = 0;     // its parts: the queues where the group has mail
    int busy = 0;      // entries in delivery, on all its parts
    // The rate, a local GCRA (cluster/gcra.hpp's arithmetic on the core's
    // clock): the theoretical arrival time of the next start, in seconds
    // (0: fresh), and how many starts it allowed when last asked (after
    // each start, and when its timer fired).  A rate that allows none
    // has a timer for when it will.
    double tat = 0;
    int rate_room = 0;
    int64_t timer_due = 0; // its pending timer (Timer::Kind::sender), 0 = none
    // A job was passed over for it since it last gained room: when it
    // gains some, its transport's blockers go (Senders::ended).
    bool blocked = false;
    // A queue that joined its provider brought deliveries in flight
    // beyond the concurrency (Senders::rescope): allowed until they end.
    bool over = false;
    // select_transport()'s pass that last counted room of it, and how
    // much it counted (Senders::lend): a load of several queues has its
    // room once, not once per queue.
    uint32_t pass = 0;
    int lent = 0;

    // How many more deliveries may start now within the limit.
    int room() const {
        int r = limit.concurrency > 0 ? limit.concurrency - busy : INT_MAX;
        return limit.rate_count > 0 && rate_room < r ? rate_room : r;
    }
};

// A reply rule's bound on one sender group's mail on one queue of a
// transport (Scheduler::set_sender_rule; sender_rule.cpp): a hold, a cap
// or a pause after each delivery, as a queue's rule (RuleLimit), for that
// group's mail alone.  Kept by name, so that it outlasts the group's part
// on the queue: a part made later picks it up.
struct SenderRule {
    SenderGroup group = 0;
    std::string transport;
    std::string queue;
    RuleLimit limit;
    // While its pause after a delivery lasts (RuleLimit::pause): its end,
    // with a timer (Timer::Kind::sender_rule); 0 = not pausing.
    int64_t paused_until = 0;
    // A job was passed over for it since it last gained room.
    bool blocked = false;
};

// One sender group's mail on one queue: its part of the group's load in
// the queue's scope (sender.cpp).  Owned by the transport's SenderBook; it
// lives while the group has a peer on the queue.
struct SenderPart {
    uint32_t number = 0;        // its own (SenderBook::part)
    uint32_t load = 0;          // its load (SenderBook::at)
    Queue* queue = nullptr;     // the queue its peers are on
    int peers = 0;              // peers of the group's jobs there
    int todo = 0;               // waiting entries, those held for a refill included
    int held = 0;               // waiting entries held back for a refill
    int busy = 0;               // entries in delivery
    SenderRule* rule = nullptr; // a reply rule's bound on it, if any
    Hook queue_hook;            // on queue->senders

    // Waiting entries, not held back, that a load with room `room` stops.
    int stopped(int room) const {
        int ready = todo - held;
        return room <= 0 ? ready : ready > room ? ready - room : 0;
    }
    // How many more deliveries its rule lets start here now (INT_MAX: no
    // rule, or one that caps nothing).  A pause allows one at a time.
    int rule_room() const {
        if (!rule) return INT_MAX;
        const RuleLimit& r = rule->limit;
        if (r.hold || rule->paused_until) return 0;
        int cap = r.pause > 0 ? 1 : r.concurrency;
        return cap > 0 ? cap - busy : INT_MAX;
    }
    // How many more deliveries may start here now: within its load `l`'s
    // limit (less `lent`, Senders::lend) and its rule.
    int room(const SenderLoad& l, int lent = 0) const {
        int r = l.room() - lent;
        return rule ? std::min(r, rule_room()) : r;
    }
};

// A transport's sender loads and parts: by number (reused once freed;
// Peer::sender is a part's), and the loads by key too.  Empty while no
// message of a limited group has mail for the transport.
struct SenderBook {
    std::vector<std::unique_ptr<SenderLoad>> loads; // null: free
    std::vector<uint32_t> free;                     // free load numbers
    std::unordered_map<std::string, uint32_t> by_key;
    std::vector<std::unique_ptr<SenderPart>> parts; // null: free
    std::vector<uint32_t> free_parts;               // free part numbers

    SenderLoad& at(uint32_t number) const { return *loads[number - 1]; }
    SenderPart& part(uint32_t number) const { return *parts[number - 1]; }
};

struct Queue {
    Transport* transport = nullptr;
    std::string name;
    std::string nexthop;
    List<Entry, &Entry::queue_hook> todo;
    List<Entry, &Entry::queue_hook> busy;
    int held = 0;        // todo entries held back for a refill (Peer::held)
    int urgent_todo = 0; // todo entries of urgent messages (held ones too)
    int window = 0;      // 0 = dead ("throttled")
    // Sender groups (sender.cpp): waiting entries of limited groups (held
    // ones too; in the word the window leaves), and the parts of the groups
    // here.
    int sender_todo = 0;
    UncountedList<SenderPart, &SenderPart::queue_hook> senders;
    double success = 0, failure = 0, fail_cohorts = 0;
    std::optional<Dsn> dsn; // why it is dead
    unsigned blocker_tag = 0;
    int64_t last_done = 0;
    int dflags = 0;         // connection cache flags for requests
    bool suspended = false; // pausing for the destination rate delay
    int64_t timer_due = 0;  // pending revive/resume timer, 0 = none
    int64_t clog_time_to_warn = 0;
    // Every bound the features place on it (limits.hpp): copies of what
    // the scheduler keeps by name (LimitBook), and the driver's gate.
    Limits limits;
    // A small number no other live queue has, given again to a queue
    // created after this one is freed (Driver::queue_freed): the driver
    // keeps its own per-queue data in a vector indexed by it, so that a
    // delivery does not look it up by name.
    uint32_t slot = 0;
    // The provider it belongs to, as the driver tells it (a small number
    // of its own; 0: none): the scope of sender limits counted per
    // provider (sender_scope_key).  Set only while some sender group's
    // limit is per provider.
    uint32_t provider = 0;
    Hook transport_hook; // on transport->queues_rr

    // Live (not dead) and not pausing for the destination rate delay.
    bool ready() const { return window > 0 && !suspended; }
    bool dead() const { return window == 0; }
    // Ready, and not suspended by the administrator: new deliveries may
    // start here, as far as select_window() allows.
    bool may_start() const { return ready() && !limits.stopped(); }
    // How much of its destination share the queue has earned (share.cpp):
    // 1 when it is created on a transport with shares, doubled by each
    // delivery that goes through, up to the transport's share.  The share
    // binds at the smaller of the two.
    int share_earned = 0x7fffffff;
    // The window selection works with: the concurrency window within the
    // bounds the features place here (Limits::window).
    int select_window() const { return limits.window(window, true, share_earned); }
    // The same without the destination share: what the queue may use
    // while no other destination of its transport waits (share.cpp).
    int open_window() const { return limits.window(window, false); }
    // Only the destination share keeps it from starting one more delivery.
    bool share_bound() const {
        int b = busy_count();
        return limits.share > 0 && select_window() <= b && open_window() > b;
    }
    int todo_count() const { return static_cast<int>(todo.size()); }
    // Waiting entries that an agent could be given now, window permitting.
    int selectable_count() const { return todo_count() - held; }
    int busy_count() const { return static_cast<int>(busy.size()); }
};

struct Job : Pooled<Job> {
    Message* message = nullptr;
    Transport* transport = nullptr;
    Job* next_job = nullptr; // the message's next job (JobChain)
    Hook transport_hook;     // scheduler's job list
    Hook time_hook;          // job list by enqueue time
    Hook sibling_hook;       // on stack_parent->children
    Job* stack_parent = nullptr;
    UncountedList<Job, &Job::sibling_hook> children;
    int stack_level = -1; // -1: not on the job lists
    unsigned blocker_tag = 0;
    PeerIndex peer_by_queue;                    // finds a peer in `peers` by queue
    UncountedList<Peer, &Peer::job_hook> peers; // round-robin order; owns the peers
    int slots_used = 0;
    int slots_available = 0;
    int selected_entries = 0;
    int read_entries = 0;
    int in_flight = 0; // selected entries not yet done (busy)
    int rcpt_count = 0;
    int rcpt_limit = 0;
    // Candidate index membership (see CandidateIndex); `order` is the job's
    // position label on the transport's job list.
    int indexed_size = 0; // key in CandidateIndex::by_size, 0 = not there
    uint64_t order = 0;
    SetHook level0_hook;
    SetHook size_hook;
    Hook stacked_hook; // on CandidateIndex::stacked
    Hook partial_hook; // on CandidateIndex::partial
    Hook blocker_hook; // on CandidateIndex::blockers
    Hook lane_hook;    // on Transport::urgent_jobs (urgent messages only)
    Hook owner_hook;   // on Transport::jobs, which owns it

    bool has_entries() const { return selected_entries < read_entries; }
    int min_entries() const { return read_entries; }
    int max_entries() const { return read_entries + message->rcpt_unread; }
};

inline JobChain::iterator& JobChain::iterator::operator++() {
    j_ = j_->next_job;
    return *this;
}

inline void JobChain::push_back(Job* j) {
    Job** at = &first_;
    while (*at)
        at = &(*at)->next_job;
    j->next_job = nullptr;
    *at = j;
}

inline Job* JobChain::release() {
    Job* all = first_;
    first_ = nullptr;
    return all;
}

// Message `m`'s job on transport `t`, if it has one.  A message has one job
// per transport it uses, and seldom more than a few.
inline Job* find_job(const Message& m, const Transport& t) {
    for (Job* j : m.jobs)
        if (j->transport == &t) return j;
    return nullptr;
}

// An index of a transport's job list for the preemption candidate search,
// kept up to date by refresh() whenever a job's stack
// level, children, blocker mark, entry counts or list position change.  The
// job list order is labelled by Job::order (increasing along the list), so
// "after the current job" is a comparison.
//
// A job is "checked" by the search when it is on the list, childless and
// not a blocker.  Checked level-zero jobs are in `level0`, by position; if
// they still need entries they are also in `by_size`, by (maximum entries,
// position), and, if some of their entries were selected already, on
// `partial`.  Jobs on a preemption stack are on `stacked`; jobs marked as
// blockers on `blockers`, so that unmarking all of them is cheap.
struct CandidateIndex {
    // Orders jobs by list position.
    struct ByOrder {
        bool operator()(const Job& a, const Job& b) const { return a.order < b.order; }
        bool operator()(const Job& a, uint64_t b) const { return a.order < b; }
        bool operator()(uint64_t a, const Job& b) const { return a < b.order; }
    };
    // Orders jobs by (maximum entries, list position).
    struct BySize {
        using Key = std::pair<int, uint64_t>;
        static Key key(const Job& j) { return {j.indexed_size, j.order}; }
        bool operator()(const Job& a, const Job& b) const { return key(a) < key(b); }
        bool operator()(const Job& a, const Key& b) const { return key(a) < b; }
        bool operator()(const Key& a, const Job& b) const { return a < key(b); }
    };
    bi::set<Job, bi::member_hook<Job, SetHook, &Job::level0_hook>, bi::compare<ByOrder>,
            bi::constant_time_size<true>>
        level0;
    bi::set<Job, bi::member_hook<Job, SetHook, &Job::size_hook>, bi::compare<BySize>,
            bi::constant_time_size<true>>
        by_size;
    List<Job, &Job::stacked_hook> stacked;
    List<Job, &Job::partial_hook> partial;
    List<Job, &Job::blocker_hook> blockers;
    // Adjacent pairs in `level0` whose enqueue times decrease; the indexed
    // search is exact only while there are none.
    int inversions = 0;
    // Searches answered by the index and by the reference scan.
    long indexed_searches = 0;
    long scanned_searches = 0;
    long relabels = 0; // crowded position labels spread again

    // Where a job belongs, from its current state.
    struct Membership {
        bool level0 = false;
        int size = 0;
        bool partial = false;
        bool stacked = false;
        bool blocker = false;
    };
    static Membership wanted(const Transport& t, const Job& j);

    // Brings job `j`'s membership in line with its state.
    void refresh(Job& j);
    // Takes job `j` out of every part of the index.
    void forget(Job& j);
    // Re-indexes the jobs that were blockers before the transport's
    // blocker tag moved on (none of them is a blocker now).
    void unblock_all();
    // The preemption candidate for `current` that the reference scan of
    // the job list would choose among jobs needing at most `max_slots`
    // more entries, at time `now`; nullopt when only the scan can be sure.
    std::optional<Job*> best(const Job& current, int max_slots, int64_t now);
    // Checks the index of `t` against its jobs and job list; panics.
    void check(const Transport& t) const;

    // Unlinks everything (the scheduler is going away).
    void clear() {
        level0.clear();
        by_size.clear();
        stacked.clear();
        partial.clear();
        blockers.clear();
    }

  private:
    // Moves job `j` into exactly the parts that `want` names.
    void apply(Job& j, const Membership& want);
};

struct Transport {
    std::string name;
    TransportConfig cfg;
    int slot_loan_factor = 50;
    std::unordered_map<std::string, std::unique_ptr<Queue>> queue_by_name;
    List<Queue, &Queue::transport_hook> queues_rr;
    // Every job of this transport, on the job lists or not.  The list owns
    // them (Jobs::obtain and Jobs::free); a message finds its job
    // through Message::jobs (find_job), which has one per transport.
    List<Job, &Job::owner_hook> jobs;
    List<Job, &Job::transport_hook> job_list;
    List<Job, &Job::time_hook> job_bytime;
    CandidateIndex candidates;
    Job* job_current = nullptr;
    Job* job_next_unread = nullptr;
    Job* candidate_cache = nullptr;
    Job* candidate_cache_current = nullptr;
    int64_t candidate_cache_time = 0;
    unsigned blocker_tag = 1; // odd, so a zeroed job never matches
    int pending = 0;          // connections not yet announced by an agent
    bool dead = false;
    // transport_rate_delay: set when a connection is granted, so that one
    // delivery runs at a time; released by the agent's reply, by a crash
    // or an empty selection (stock keeps it then, see docs/compatibility.md)
    // and when a dead transport revives.
    bool rate_locked = false;
    // Jobs were marked blockers while destination shares held their
    // queues back, by the rules of these kinds (ShareKind bits): when the
    // other queues no longer make such a share bind, the marks go
    // (Jobs::share_update).
    uint8_t share_blocked = 0;
    // Entries sent before their refill landed, because an agent had nothing
    // else to do (see Selection::walk).
    long early_entries = 0;
    std::optional<Dsn> dsn;
    int64_t dead_until = 0;
    int rcpt_unused = 0;
    int rcpt_per_stack = 0;
    // The administrator's suspension of the whole transport (a copy of the
    // scheduler's, see admin.hpp): no connection is asked for and no entry
    // selected while it lasts.
    std::optional<AdminHold> hold;
    Hook hook; // on the scheduler's transport list

    // Priority lanes (lanes.cpp): the linked jobs of urgent messages, in
    // enqueue order, and the entries in flight per lane.
    List<Job, &Job::lane_hook> urgent_jobs;
    int lane_busy[lane_count] = {0, 0, 0};
    // Sender groups' mail here (sender.cpp).
    SenderBook senders;

    bool is_blocker(const Job& j) const { return j.blocker_tag == blocker_tag; }
    void reset_candidate_cache() { candidate_cache_current = nullptr; }
};

} // namespace cqmgr::core
