#include "control_wiring.hpp"

namespace cqmgr::qmgr {

ControlCommand control_command(const control::Request& r, int64_t uid) {
    ControlCommand c;
    switch (r.verb) {
    case control::Verb::suspend:
        c.kind = ControlCommand::Kind::suspend;
        break;
    case control::Verb::resume:
        c.kind = ControlCommand::Kind::resume;
        break;
    case control::Verb::flush:
        c.kind = ControlCommand::Kind::flush;
        break;
    case control::Verb::throttle:
        c.kind = ControlCommand::Kind::throttle;
        break;
    case control::Verb::unthrottle:
        c.kind = ControlCommand::Kind::unthrottle;
        break;
    default:
        break; // queries never get here (ControlDispatch answers them)
    }
    if (r.target) {
        c.transport = r.target->transport;
        c.destination = r.target->destination;
    }
    c.duration = r.duration.value_or(0);
    c.reason = r.reason;
    c.concurrency = r.concurrency;
    c.uid = uid;
    return c;
}

} // namespace cqmgr::qmgr
