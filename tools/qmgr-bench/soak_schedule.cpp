#include "soak_schedule.hpp"

#include <algorithm>

namespace bench {

// Suspensions with and without a duration, of a destination and of a whole
// transport, one kept across the reload (48 % to 58 %); throttles; flushes
// of the dead destination and of the flapping one; requeues of everything
// (which catches messages in delivery) and of deferred mail; three Redis
// restarts. A suspension or throttle holds mail in cqmgr's active queue
// (stock has none), so none is in force within the two windows the
// verdict compares (1/6 to 1/3 and 5/6 to the end), except the last
// event's, which the drain lifts.
const std::vector<SoakEvent>& soak_schedule() {
    using A = SoakAction;
    static const std::vector<SoakEvent> s = {
        {0.05, A::Control, {"suspend", "@slow", "for", "60s", "reason", "soak"}},
        {0.08, A::Control, {"throttle", "@fast", "2", "for", "90s"}},
        {0.11, A::Control, {"suspend", "relay", "reason", "soak"}},
        {0.13, A::Control, {"resume", "relay"}},
        {0.20, A::Requeue, {}},
        {0.25, A::RedisRestart, {}},
        {0.28, A::Control, {"flush", "@dead"}},
        {0.31, A::FlushAll, {}},
        {0.34, A::Control, {"throttle", "@limited", "1"}},
        {0.38, A::Control, {"unthrottle", "@limited"}},
        {0.40, A::KillQmgr, {}},
        {0.45, A::RequeueDeferred, {}},
        {0.48, A::Control, {"suspend", "@flap", "reason", "soak"}},
        {0.55, A::Reload, {}},
        {0.58, A::Control, {"resume", "@flap"}},
        {0.60, A::RedisRestart, {}},
        {0.63, A::Requeue, {}},
        {0.66, A::Control, {"suspend", "@random", "for", "2m", "reason", "soak"}},
        {0.70, A::Control, {"throttle", "@tarpit", "1", "for", "2m"}},
        {0.75, A::Control, {"flush", "@flap"}},
        {0.78, A::Control, {"suspend", "@dead", "reason", "soak"}},
        {0.81, A::Control, {"resume", "@dead"}},
        {0.85, A::Requeue, {}},
        {0.88, A::RedisRestart, {}},
        {0.92, A::Control, {"flush", "@dead"}},
        {0.99, A::Control, {"suspend", "@bounce", "reason", "soak"}},
    };
    return s;
}

std::vector<std::vector<std::string>> soak_undo_commands() {
    std::vector<std::vector<std::string>> out;
    for (const auto& e : soak_schedule()) {
        if (e.action != SoakAction::Control || e.args.size() < 2) continue;
        std::vector<std::string> undo;
        if (e.args[0] == "suspend") undo = {"resume", e.args[1]};
        if (e.args[0] == "throttle") undo = {"unthrottle", e.args[1]};
        if (!undo.empty() && std::find(out.begin(), out.end(), undo) == out.end())
            out.push_back(undo);
    }
    return out;
}

std::string describe(const SoakEvent& e) {
    switch (e.action) {
    case SoakAction::KillQmgr:
        return "kill -9 of the queue manager";
    case SoakAction::Reload:
        return "postfix reload";
    case SoakAction::Requeue:
        return "postsuper -r ALL";
    case SoakAction::RequeueDeferred:
        return "postsuper -r ALL deferred";
    case SoakAction::FlushAll:
        return "postqueue -f";
    case SoakAction::RedisRestart:
        return "redis-server restarted empty";
    case SoakAction::Control: {
        std::string s = "cqmgrctl";
        for (const auto& a : e.args)
            s += " " + a;
        return s;
    }
    }
    return "?";
}

} // namespace bench
