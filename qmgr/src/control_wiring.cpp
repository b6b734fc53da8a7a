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

namespace {

// {"reason","until","by"} of a suspension; until = null when it has no end.
ControlQueries::Json hold_object(const core::AdminHold& h) {
    ControlQueries::Json o;
    o["reason"] = h.reason;
    o["until"] = h.until ? ControlQueries::Json(h.until) : ControlQueries::Json(nullptr);
    o["by"] = h.uid;
    return o;
}

} // namespace

void annotate_control_state(const core::Transport& t, const core::Queue* q,
                            ControlQueries::Json& object) {
    const auto& hold = q ? q->hold : t.hold;
    object["suspended"] = hold ? hold_object(*hold) : ControlQueries::Json(nullptr);
    if (!q) return;
    if (q->cap) {
        ControlQueries::Json c;
        c["concurrency"] = q->cap->concurrency;
        c["until"] =
            q->cap->until ? ControlQueries::Json(q->cap->until) : ControlQueries::Json(nullptr);
        object["throttle"] = c;
    } else {
        object["throttle"] = nullptr;
    }
}

void annotate_learned(const AdaptiveLimits& adaptive, const core::Queue& q,
                      ControlQueries::Json& object) {
    auto it = object.find("learned");
    if (it == object.end() || it->is_null()) return;
    if (const AdaptiveLimits::Cause* c = adaptive.cause(q)) {
        (*it)["class"] = reply_class_name(c->cls);
        (*it)["status"] = c->status;
        (*it)["reason"] = c->text;
        (*it)["when"] = c->when;
    }
}

} // namespace cqmgr::qmgr
