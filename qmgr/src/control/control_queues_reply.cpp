#include "control_queues_reply.hpp"

#include "control_queries.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {

using Json = control::Json;

// A time in a reply: null when there is none (0).
Json until_json(int64_t until) {
    return until > 0 ? Json(until) : Json(nullptr);
}

// {"status":..., "reason":..., "until":...} of a dead transport or queue.
Json dead_state(const std::optional<core::Dsn>& dsn, int64_t until) {
    Json j = control::object_with_room(3);
    j["status"] = dsn ? dsn->status : std::string();
    j["reason"] = dsn ? dsn->reason : std::string();
    j["until"] = until_json(until);
    return j;
}

// {"reason","until","by"} of an administrator's suspension (until = null
// when it ends at resume only), or null when there is none.
Json hold_state(const std::optional<core::AdminHold>& h) {
    if (!h) return nullptr;
    Json j;
    j["reason"] = h->reason;
    j["until"] = until_json(h->until);
    j["by"] = h->uid;
    return j;
}

// {"concurrency","until"} of an administrator's cap, or null.
Json cap_state(const std::optional<core::AdminCap>& c) {
    if (!c) return nullptr;
    Json j;
    j["concurrency"] = c->concurrency;
    j["until"] = until_json(c->until);
    return j;
}

// The members of a reply rule's action `a` (null: not known) that bounds
// with `l`, on `target`: {"target","action","rule","reason","hold",
// "concurrency","pause","since","until","deliveries_left"}.
void rule_state(control::Refill& r, const ReplyActions::Active* a, const core::RuleLimit& l,
                const std::string& target) {
    r.string("target", a ? a->target.text() : target);
    r.string("action", a ? a->action : std::string());
    r.string("rule", a ? a->rule : std::string());
    r.string("reason", a ? a->reason : std::string());
    r["hold"] = l.hold;
    r["concurrency"] = l.concurrency > 0 ? Json(l.concurrency) : Json(nullptr);
    r["pause"] = l.pause > 0 ? Json(l.pause) : Json(nullptr);
    r["since"] = a ? Json(a->since) : Json(nullptr);
    r["until"] = until_json(l.until);
    r["deliveries_left"] = a && a->deliveries > 0 ? Json(a->deliveries) : Json(nullptr);
}

} // namespace

const Json& QueuesReply::fill(const ControlSources& src,
                              const std::vector<const core::Transport*>& transports) {
    Json& reply = reply_;
    control::Refill r(reply);
    r["ok"] = true;
    Json& list = r["transports"];
    control::resize_array(list, transports.size());
    std::vector<const core::Queue*> qs;
    for (size_t i = 0; i < transports.size(); ++i) {
        const core::Transport& t = *transports[i];
        // Destinations by name, so that a poller sees a stable order.
        qs.clear();
        qs.reserve(t.queue_by_name.size());
        for (const auto& [name, q] : t.queue_by_name)
            qs.push_back(q.get());
        std::sort(qs.begin(), qs.end(),
                  [](const core::Queue* a, const core::Queue* b) { return a->name < b->name; });
        int busy = 0, todo = 0;
        for (const core::Queue* q : qs) {
            busy += q->busy_count();
            todo += q->todo_count();
        }
        control::Refill tj(list[i]);
        fill_transport_state(tj, t, busy, todo);
        Json& qlist = tj["queues"];
        control::resize_array(qlist, qs.size());
        for (size_t k = 0; k < qs.size(); ++k)
            fill_queue_state(src, qlist[k], t, *qs[k]);
    }
    return reply;
}

void QueuesReply::fill_transport_state(control::Refill& j, const core::Transport& t, int busy,
                                       int todo) {
    j.string("name", t.name);
    j["dead"] = t.dead ? dead_state(t.dsn, t.dead_until) : Json(nullptr);
    j["suspended"] = hold_state(t.hold);
    j["busy"] = busy;
    j["todo"] = todo;
    j["pending_connections"] = t.pending;
    j["rate_delay"] = t.cfg.transport_rate_delay;
    j["rate_locked"] = t.rate_locked;
    j["concurrency_limit"] = t.cfg.dest_concurrency_limit;
}

void QueuesReply::fill_queue_state(const ControlSources& src, Json& out, const core::Transport& t,
                                   const core::Queue& q) {
    control::Refill j(out);
    j.string("name", q.name);
    j.string("nexthop", q.nexthop);
    j["window"] = q.window;
    j["busy"] = q.busy_count();
    j["todo"] = q.todo_count();
    j["held"] = q.held;
    // A dead queue's reason is already in the words stock logs for its
    // recipients ("delivery temporarily suspended: ...").
    j["dead"] = q.dead() ? dead_state(q.dsn, q.timer_due) : Json(nullptr);
    j["suspended"] = hold_state(q.limits.hold);
    j["throttle"] = cap_state(q.limits.cap);
    Json& last_dsn = j["last_dsn"];
    if (const DeliveryRecord::LastDsn* last = src.deliveries.last_dsn(q)) {
        control::Refill d(last_dsn);
        d.string("status", last->dsn.status);
        d.string("reason", last->dsn.reason);
        d["when"] = last->when;
    } else {
        last_dsn = nullptr;
    }
    {
        control::Refill c(j["cohort"]);
        c["success"] = q.success;
        c["failure"] = q.failure;
        c["fail_cohorts"] = q.fail_cohorts;
    }
    {
        control::Refill rate(j["rate_delay"]);
        rate["seconds"] = t.cfg.dest_rate_delay;
        rate["waiting"] = q.suspended;
        rate["until"] = q.suspended && q.timer_due > 0 ? Json(q.timer_due) : Json(nullptr);
    }
    // Its destination share (null: none): what it may have in flight, the
    // transport's full share, and whether the isolation lowered it or
    // waits for a probe.
    Json& share = j["share"];
    if (q.limits.share > 0) {
        control::Refill sh(share);
        sh["agents"] = q.limits.share;
        sh["full"] = core::share_full(t);
        IsolationPolicy::Key key{t.name, q.name};
        sh["lowered"] = src.isolation && src.isolation->policy().lowered(key) > 0;
        sh["probe"] = src.isolation && src.isolation->policy().probing(key);
    } else {
        share = nullptr;
    }
    // The reply rule's action that bounds it (null: none): on this queue
    // or on its whole transport.
    Json& rule = j["rule"];
    if (q.limits.rule) {
        control::Refill r(rule);
        const ReplyActions::Active* a = src.actions ? src.actions->covering(q) : nullptr;
        rule_state(r, a, *q.limits.rule, t.name + ":" + q.name);
    } else {
        rule = nullptr;
    }
    // The reply rules' actions on one sender group's mail here (the sender
    // scopes), each with its group: [] when none.
    Json& senders = j["sender_rules"];
    std::vector<const ReplyActions::Active*> sender_rules;
    if (src.actions) sender_rules = src.actions->sender_covering(q);
    control::resize_array(senders, sender_rules.size());
    for (size_t i = 0; i < sender_rules.size(); ++i) {
        control::Refill r(senders[i]);
        r.string("group", sender_rules[i]->group);
        rule_state(r, sender_rules[i], sender_rules[i]->limit(), t.name + ":" + q.name);
    }
    // What the adaptive limits learned here, and from which reply (null:
    // nothing).
    Json& learned = j["learned"];
    if (!q.limits.learned.any()) {
        learned = nullptr;
        return;
    }
    control::Refill l(learned);
    l["concurrency"] =
        q.limits.learned.concurrency > 0 ? Json(q.limits.learned.concurrency) : Json(nullptr);
    l["rate_delay"] =
        q.limits.learned.rate_delay > 0 ? Json(q.limits.learned.rate_delay) : Json(nullptr);
    l["quota"] = q.limits.learned.quota > 0 ? Json(q.limits.learned.quota) : Json(nullptr);
    l["window"] = q.limits.learned.window > 0 ? Json(q.limits.learned.window) : Json(nullptr);
    l["held_until"] =
        q.limits.learned.held_until > 0 ? Json(q.limits.learned.held_until) : Json(nullptr);
    l["slow_start"] = src.adaptive && src.adaptive->slow_start(q);
    if (const AdaptiveLimits::Cause* c = src.adaptive ? src.adaptive->cause(q) : nullptr) {
        l.string("class", reply_class_name(c->cls));
        l.string("status", c->status);
        l.string("reason", c->text);
        l["when"] = c->when;
    }
}

} // namespace cqmgr::qmgr
