// A discrete-event simulation of delivery: simulated destinations (with a
// server concurrency limit, a per-recipient latency, failures) served by the
// real scheduler core on a simulated clock.  Used by tests that reproduce
// Postfix's published scheduler measurements (docs/postfix-facts.md §10.9)
// and by tools/qmgr-sim for admins.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::core {

struct SimDestination {
    std::string name;
    std::string transport = "smtp";
    int server_limit = 0;          // sessions the server accepts at once; 0 = any
    double latency_per_rcpt = 1.0; // seconds per recipient
    double session_setup = 0.0;    // seconds per session before the first recipient
    bool down = false;             // every connection fails (4.4.1)
    double down_until = 0;         // ... until this time
    double fail_ratio = 0.0;       // fraction of sessions that end in 4.x.x (hop failure)
    // The receiver (SimProvider) that serves it too, as a large provider's
    // MX hosts serve many domains: "" = its own only.
    std::string provider{};
};

// A receiver shared by several destinations, as a large provider's MX
// hosts are: it counts the sessions and messages of all of them together
// (per sending IP, which is this one relay) and answers beyond its limits
// as such receivers do.  A refused session is a hop failure with `reply`
// (its enhanced status code is the DSN status), before any recipient.
struct SimProvider {
    std::string name;
    int session_limit = 0; // sessions at once across its destinations; 0 = any
    std::string session_reply = "421 4.7.0 Too many concurrent SMTP connections";
    int message_limit = 0;      // sessions accepted per message_period; 0 = any
    double message_period = 60; // seconds
    std::string rate_reply = "450 4.2.1 The user you are trying to contact is receiving mail "
                             "at a rate that prevents additional messages from being delivered";
    // After a rate_reply, every session is refused with it for this long
    // (0: only while over the rate), as Yahoo's TSS04 does.
    double block_for = 0;
};

struct SimMessage {
    std::string id;
    double arrival = 0;
    // (destination name, recipient count)
    std::vector<std::pair<std::string, int>> recipients;
    Lane lane = Lane::normal; // its priority lane (cqmgr_priority_maps)
    std::string sender{};     // its envelope sender ("": the null sender)
};

struct SimResult;

// What a driver's features (the daemon's opt-in parts, e.g. provider
// gates and reply rules) do in a simulation: told of each message, queue
// and delivery as the daemon's features are, they change the scheduler's
// bounds (Scheduler::set_limit) from outside its callbacks.  Every
// function has a default that does nothing.
class SimHooks {
  public:
    virtual ~SimHooks() = default;
    // Message `m` (made from `sm`) enters, before Scheduler::message_add:
    // e.g. its sender group.
    virtual void message_arrives(Scheduler& s, Message& m, const SimMessage& sm) {
        (void)s, (void)m, (void)sm;
    }
    // Driver::queue_gate and Driver::queue_freed (scheduler callbacks).
    virtual std::optional<int> queue_gate(const Queue& q) {
        (void)q;
        return std::nullopt;
    }
    virtual void queue_freed(const Queue& q) { (void)q; }
    // Driver::admin_expired (a scheduler callback) at simulated time `now`.
    virtual void admin_expired(AdminKind kind, const AdminTarget& target, double now) {
        (void)kind, (void)target, (void)now;
    }
    // Driver::sender_rule_expired (a scheduler callback) at simulated time
    // `now`.
    virtual void sender_rule_expired(const AdminTarget& target, SenderGroup g, double now) {
        (void)target, (void)g, (void)now;
    }
    // Entry `e` was handed to an agent at `now`.
    virtual void delivery_started(Scheduler& s, const Entry& e, double now) {
        (void)s, (void)e, (void)now;
    }
    // Entry `e` ended with `r` at `now`; Scheduler::delivery_done follows.
    virtual void delivery_ended(Scheduler& s, const Entry& e, const DeliveryResult& r, double now) {
        (void)s, (void)e, (void)r, (void)now;
    }
    // The simulated time at which wake() wants to run next (infinity: none).
    virtual double next_wake() const { return std::numeric_limits<double>::infinity(); }
    virtual void wake(Scheduler& s, double now) { (void)s, (void)now; }
    // The run is over: what the hooks add to the result.
    virtual void finish(SimResult& r) { (void)r; }
};

struct SimConfig {
    SchedulerConfig scheduler;
    TransportConfig default_transport;
    std::map<std::string, TransportConfig> transports;
    std::vector<SimDestination> destinations;
    std::vector<SimMessage> messages;
    double end_time = 1e9;     // stop here at the latest
    double sample_every = 1.0; // concurrency timeline resolution (seconds)
    unsigned seed = 1;
    // Run check_invariants() after every Nth event; 0 = never (tests; slow).
    int check_invariants_every = 0;
    // How long reading and resolving a batch of recipients takes, in
    // simulated seconds.  0: Driver::refill assigns the batch before it
    // returns (as stock qmgr reads).  Above 0: the batch is taken from the
    // file at once but assigned, and batch_done() called, that much later,
    // as the daemon does while trivial-rewrite answers; first batches and
    // the batches read at a message's end take as long.
    double refill_latency = 0;
    // Each transport's agent processes (master.cf maxproc): at most this
    // many deliveries at once; a connection asked for beyond it waits for
    // an agent to finish, as master(8) makes it wait.  A transport not
    // named here, or with 0, has as many agents as it asks for.
    std::map<std::string, int> process_limits;
    // The receivers that serve several destinations (SimDestination::provider).
    std::vector<SimProvider> providers;
};

struct SimDelivery {
    double start = 0, end = 0;
    std::string message, destination;
    int recipients = 0;
    bool ok = false;
};

// What a shared receiver saw.
struct SimProviderStats {
    int max_sessions = 0; // the most sessions at once across its destinations
    // The most connections at once, a refused one counted as it arrives
    // (what the receiver sees: never above its session_limit + 1).
    int max_connections = 0;
    int sessions = 0;  // sessions accepted
    int refused = 0;   // sessions refused (beyond a limit, or while blocking)
    int delivered = 0; // recipients
    int deferred = 0;  // recipients
};

// One thing a feature did, for the report: e.g. a reply rule's action.
struct SimEvent {
    double time = 0;
    std::string what;   // "start", "end", ...
    std::string target; // "smtp:d.example"
    std::string text;
};

struct SimDestinationStats {
    int delivered = 0;                                   // recipients
    int deferred = 0;                                    // recipients
    double concurrency_mean = 0, concurrency_stddev = 0; // time-weighted, while busy
    int max_concurrency = 0;
    bool declared_dead = false;
};

// The state of the run at one instant of the timeline: every sample_every
// seconds, whenever a destination's window moves, and once at the end.
struct SimSample {
    double time = 0;
    int delivered = 0;     // recipients, so far
    int deferred = 0;      // recipients, so far
    int messages_done = 0; // messages with every recipient finished
    struct TransportState {
        int busy = 0;    // agents in a delivery (or pausing for a rate delay)
        int waiting = 0; // connections waiting for a free agent (process limit)
    };
    std::map<std::string, TransportState> transports;
    struct DestinationState {
        int window = -1; // the scheduler's concurrency window; 0 = dead; -1 = no queue
        int sessions = 0;
        int delivered = 0; // recipients, so far
        int deferred = 0;  // recipients, so far
        bool held = false; // no new delivery may start (Limits::stopped)
    };
    std::map<std::string, DestinationState> destinations;
    std::map<std::string, int> provider_sessions; // by SimProvider name
};

struct SimResult {
    int delivered = 0;
    int deferred = 0;
    double end_time = 0;
    std::map<std::string, double> message_done; // message -> completion time
    std::map<std::string, SimDestinationStats> destinations;
    std::vector<SimDelivery> deliveries;
    int max_in_core_recipients = 0;
    // Recipients finished (delivered or deferred) other than exactly once.
    int never_finished = 0;
    int finished_twice = 0;
    // Selections per transport, in order, as message ids (for fairness checks).
    std::map<std::string, std::vector<std::string>> selections;
    // Preemption candidate searches answered by the index and by the scan.
    long indexed_searches = 0;
    long scanned_searches = 0;
    long relabels = 0; // job list position labels spread again
    // Connections select_transport() granted on which select_entry() then
    // found nothing: an agent that would receive no request.
    int idle_connections = 0;
    // Entries sent before their refill landed, because an agent had nothing
    // else to do (Transport::early_entries).
    long early_entries = 0;
    // The timeline (see SimSample).
    std::vector<SimSample> samples;
    // The most agents of each transport busy at once.
    std::map<std::string, int> max_busy_agents;
    // Per shared receiver (SimProvider) by name.
    std::map<std::string, SimProviderStats> providers;
    // Delivery attempts (sessions tried, refused ones included).
    int attempts = 0;
    // What the hooks did, in time order.
    std::vector<SimEvent> events;
};

// Runs the simulation to completion (or end_time), with `hooks` (may be
// null) told of what happens.
SimResult simulate(const SimConfig& cfg, SimHooks* hooks = nullptr);

} // namespace cqmgr::core
