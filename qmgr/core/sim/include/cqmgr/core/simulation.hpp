// A discrete-event simulation of delivery: simulated destinations (with a
// server concurrency limit, a per-recipient latency, failures) served by the
// real scheduler core on a simulated clock, with as many agents per
// transport as its TransportConfig::process_limit (master.cf maxproc; 0 =
// no limit).  Used by tests that reproduce Postfix's published scheduler
// measurements (docs/postfix-facts.md §10.9) and by tools/qmgr-sim for
// admins.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <map>
#include <string>
#include <vector>

namespace cqmgr::core {

struct SimDestination {
    std::string name;
    std::string transport = "smtp";
    int server_limit = 0;            // sessions the server accepts at once; 0 = any
    double latency_per_rcpt = 1.0;   // seconds per recipient
    double session_setup = 0.0;      // seconds per session before the first recipient
    bool down = false;               // every connection fails (4.4.1)
    double down_until = 0;           // ... until this time
    double fail_ratio = 0.0;         // fraction of sessions that end in 4.x.x (hop failure)
};

struct SimMessage {
    std::string id;
    double arrival = 0;
    // (destination name, recipient count)
    std::vector<std::pair<std::string, int>> recipients;
    Lane lane = Lane::normal; // its priority lane (cqmgr_priority_maps)
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
};

struct SimDelivery {
    double start = 0, end = 0;
    std::string message, destination;
    int recipients = 0;
    bool ok = false;
};

struct SimDestinationStats {
    int delivered = 0;      // recipients
    int deferred = 0;       // recipients
    double concurrency_mean = 0, concurrency_stddev = 0; // time-weighted, while busy
    int max_concurrency = 0;
    bool declared_dead = false;
    std::vector<std::pair<double, int>> timeline; // (time, concurrency) samples
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
    // Connections that waited for a free agent (process_limit) and then
    // found nothing: the entry went to another agent meanwhile.
    int idle_after_wait = 0;
    // Entries sent before their refill landed, because an agent had nothing
    // else to do (Transport::early_entries).
    long early_entries = 0;
};

// Runs the simulation to completion (or end_time).
SimResult simulate(const SimConfig& cfg);

} // namespace cqmgr::core
