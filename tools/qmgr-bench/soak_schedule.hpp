// What the soak does to both sides while mail flows, at fixed fractions
// of the run, so that a short run and a long one see the same sequence.
// The queue manager restarts (kill -9 at 40 %, postfix reload at 55 %) fall
// between the two windows the verdict compares (minutes 5-10 and the last
// 5 of a 30-minute run), so that both windows see a queue manager that has
// run for 5 to 15 minutes.
#pragma once

#include <string>
#include <vector>

namespace bench {

enum class SoakAction {
    KillQmgr,        // kill -9 of the queue manager; master starts another
    Reload,          // postfix reload
    Requeue,         // postsuper -r ALL, then pickup is woken
    RequeueDeferred, // postsuper -r ALL deferred, then pickup is woken
    FlushAll,        // postqueue -f
    RedisRestart,    // cqmgr's redis-server stopped and started empty
    Control,         // cqmgrctl ARGS (cqmgr only)
};

struct SoakEvent {
    double at; // fraction of the injection time
    SoakAction action;
    // Control: cqmgrctl's arguments; "@NAME" is the queue name
    // TRANSPORT:[127.0.0.1]:PORT of destination NAME (soak_traffic.hpp).
    std::vector<std::string> args;
};

// The events in time order.
const std::vector<SoakEvent>& soak_schedule();

// The cqmgrctl commands that undo every suspension and throttle the
// schedule makes (resume, unthrottle), for the drain: a command that
// changes nothing does no harm.
std::vector<std::vector<std::string>> soak_undo_commands();

// One line for the event log: "kill -9 of the queue manager", "cqmgrctl
// suspend @slow for 60s".
std::string describe(const SoakEvent& e);

} // namespace bench
