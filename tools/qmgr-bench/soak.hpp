// `tools/bench --workload soak`: stock qmgr and cqmgr side by side, at the
// same time, for --duration (30 minutes by default), on the same mixed
// traffic to fast, slow, tarpitting, flapping, 4xx-at-random,
// connection-limited, bouncing, dead and ever-new destinations (a new
// domain for nearly every recipient of one kind), with every cqmgr_
// feature on; the queue managers are killed, reloaded and poked
// (soak_schedule.hpp) while mail flows. Then injection stops, suspensions
// are lifted, the receivers come back, the queues drain, and the report
// says whether every recipient was delivered once or bounced as expected,
// what the queue managers logged, and how their memory, descriptors and
// cqmgr's state store moved.
//
// Both sides run at once rather than alternately: the soak measures
// outcomes and drift, not speed, and at once both see the same moments of
// the schedule and the same load, in half the time.
#pragma once

#include "run.hpp"

#include <string>

namespace bench {

struct SoakOptions {
    double duration = 1800;       // seconds of injection
    double rate = 5;              // messages per second into each side
    std::string out;              // samples, plots and verdict
    bool private_network = false; // in a private netns: loopback aliases and 0.0.0.0 sinks
};

// Runs the soak and prints its report; 0 if cqmgr passes every point.
int run_soak(const RunOptions& opts, const SoakOptions& soak);

} // namespace bench
