#include "control_explain.hpp"

#include "cluster_limits.hpp"
#include "control_queries.hpp"
#include "control_time.hpp"
#include "deferred_index.hpp"
#include "explain_features.hpp"
#include "explain_text.hpp"

#include <unordered_set>

namespace cqmgr::qmgr {

namespace {

using Json = control::Json;
using Bound = LimitLine::Bound;

// Another destination of `t` than `q` could start a delivery now: the
// test of share.cpp's destination_waits(), without `q` itself (mail that
// sender groups' limits stop does not count).
bool others_wait(const core::Transport& t, const core::Queue& q) {
    for (const core::Queue& o : t.queues_rr)
        if (&o != &q && o.may_start() && o.selectable_count() > sender_stopped_entries(o) &&
            o.select_window() > o.busy_count())
            return true;
    return false;
}

Json line_json(const LimitLine& l) {
    Json j = control::object_with_room(6);
    j["bound"] = bound_name(l.bound);
    if (l.bound == Bound::rate) {
        j["value"] = rate_text(l.value);
    } else if (l.value == static_cast<double>(static_cast<int64_t>(l.value))) {
        j["value"] = static_cast<int64_t>(l.value);
    } else {
        j["value"] = l.value;
    }
    j["source"] = l.source;
    j["detail"] = l.detail;
    j["in_force"] = l.in_force;
    j["binds"] = l.binds;
    return j;
}

// The limits of `s`, from every source in order, with the binding ones
// marked.
std::vector<LimitLine> limit_lines(const ExplainSubject& s, EffectiveLimits& e) {
    std::vector<LimitLine> lines;
    dead_lines(s, lines);
    admin_lines(s, lines);
    cluster_lines(s, lines);
    learned_lines(s, lines);
    share_lines(s, lines);
    for (const LimitSource& more : s.src.explain.sources)
        more(s, lines);
    main_cf_lines(s, lines);
    e = bind_limits(lines);
    return lines;
}

// What waits in the active queue for `q`: its entries not yet sent, with
// their messages and recipients, and what is in flight.
Json waiting_json(const core::Queue& q) {
    std::unordered_set<const core::Message*> messages;
    size_t rcpts = 0;
    for (const core::Entry& e : q.todo) {
        messages.insert(e.message);
        rcpts += e.rcpts.size();
    }
    size_t busy_rcpts = 0;
    for (const core::Entry& e : q.busy)
        busy_rcpts += e.rcpts.size();
    Json j = control::object_with_room(5);
    j["messages"] = messages.size();
    j["recipients"] = rcpts;
    j["held_for_refill"] = q.held;
    j["in_flight"] = q.busy_count();
    j["recipients_in_flight"] = busy_rcpts;
    return j;
}

// When the queue's mail is tried next, as far as the active queue goes;
// `concurrency`: its effective concurrency, and `binder` the source of the
// line that sets it (nullptr: none).
Json next_retry_json(const ExplainSubject& s, int concurrency, const std::string* binder) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    Json j = control::object_with_room(2);
    auto at = [&](int64_t when, std::string what) {
        j["when"] = when > 0 ? Json(when) : Json(nullptr);
        j["what"] = std::move(what);
    };
    if (t.dead)
        at(t.dead_until,
           "the transport " + t.name + " is dead; it is tried again at " + iso_utc(t.dead_until));
    else if (t.hold)
        at(t.hold->until, "the transport is suspended" +
                              until_words(t.hold->until, s.now, " until cqmgrctl resume"));
    else if (q.dead())
        at(q.timer_due, "the destination is dead; it revives at " + iso_utc(q.timer_due) +
                            " and its next mail is tried then");
    else if (q.limits.hold)
        at(q.limits.hold->until,
           "suspended" + until_words(q.limits.hold->until, s.now, " until cqmgrctl resume"));
    else if (q.limits.rule && q.limits.rule->hold)
        at(q.limits.rule->until,
           "suspended by a reply rule" +
               until_words(q.limits.rule->until, s.now, " until cqmgrctl resume"));
    else if (q.suspended)
        at(q.timer_due, "pausing for its rate delay until " + iso_utc(q.timer_due));
    else if (q.todo_count() == 0)
        at(0, "nothing waits in the active queue");
    else if (concurrency > q.busy_count())
        at(s.now, "now: its mail waits for a delivery agent");
    else if (q.busy_count() == 0 && binder)
        // A limit shared with other destinations (a provider's, the
        // cluster's) or a sender group's: nothing here will end first.
        at(0, "when the " + *binder + " limit has room again (" + std::to_string(concurrency) +
                  " at once allowed now, none in flight here)");
    else
        at(0, "when a delivery in flight ends (" + std::to_string(q.busy_count()) + " in flight, " +
                  std::to_string(concurrency) + " at once allowed)");
    return j;
}

// What cqmgr can say of the destination's mail in deferred/.
Json deferred_json(const ExplainSubject& s) {
    Json j = control::object_with_room(2);
    const std::string note =
        "each deferred message is tried again at its own time (its queue file's, between "
        "minimal_backoff_time and maximal_backoff_time), when the deferred scan (every "
        "queue_run_delay) finds it due";
    if (const DeferredIndex* index = s.src.deferred) {
        j["messages"] = index->messages_for(s.transport.name + ":" + s.queue.nexthop);
        j["note"] = "messages cqmgr deferred since it started (kept for cqmgr_recovery_rate or "
                    "cqmgr_dead_backlog); " +
                    note;
    } else {
        j["messages"] = nullptr;
        j["note"] = "not known: like stock, cqmgr keeps no index of deferred mail by "
                    "destination unless cqmgr_recovery_rate or cqmgr_dead_backlog is set; " +
                    note;
    }
    return j;
}

Json queue_json(const ControlSources& src, const core::Transport& t, const core::Queue& q,
                int64_t now) {
    ExplainSubject s{src, t, q, now, others_wait(t, q)};
    EffectiveLimits e;
    std::vector<LimitLine> lines = limit_lines(s, e);
    Json j = control::object_with_room(10);
    j["transport"] = t.name;
    j["destination"] = q.name;
    j["nexthop"] = q.nexthop;
    Json eff = control::object_with_room(2);
    eff["concurrency"] = e.concurrency;
    eff["rate"] = e.rate ? Json(rate_text(*e.rate)) : Json(nullptr);
    j["effective"] = std::move(eff);
    Json list = Json::array();
    for (const LimitLine& l : lines)
        list.push_back(line_json(l));
    j["limits"] = std::move(list);
    if (const DeliveryRecord::LastDsn* last = src.deliveries.last_dsn(q)) {
        Json d = control::object_with_room(3);
        d["status"] = last->dsn.status;
        d["reason"] = last->dsn.reason;
        d["when"] = last->when;
        j["last_deferral"] = std::move(d);
    } else {
        j["last_deferral"] = nullptr;
    }
    j["next_retry"] = next_retry_json(
        s, e.concurrency, e.concurrency_line ? &lines[*e.concurrency_line].source : nullptr);
    j["waiting"] = waiting_json(q);
    j["deferred"] = deferred_json(s);
    return j;
}

// What `target` names: as the grammar splits it, or, when the word before
// its colon names no transport and a queue has the whole text for its name
// ("example.com:25"), that destination on every transport.
control::Target named(const core::Scheduler& sched, const control::Target& target) {
    const auto& transports = sched.transports();
    if (target.transport.empty() || transports.count(target.transport)) return target;
    for (const auto& [name, t] : transports)
        if (sched.find_queue(name, target.text))
            return control::Target{target.text, {}, target.text};
    return target;
}

// The queues `target` names: its own queue, or the queue of that name on
// every transport (by transport name).
std::vector<const core::Queue*> queues_named(const core::Scheduler& sched,
                                             const control::Target& target) {
    std::vector<const core::Queue*> out;
    if (!target.transport.empty()) {
        if (const core::Queue* q = sched.find_queue(target.transport, target.destination))
            out.push_back(q);
        return out;
    }
    for (const auto& [name, t] : sched.transports())
        if (const core::Queue* q = sched.find_queue(name, target.destination)) out.push_back(q);
    return out;
}

// The settings kept by name for `name` (and `transport`, if given) while
// no queue of it exists: they apply to its next mail.
Json kept_settings(const core::LimitBook& book, const control::Target& target, int64_t now) {
    Json list = Json::array();
    auto matches = [&](const core::AdminTarget& a) {
        if (target.transport.empty()) return a.queue == target.text;
        return a.queue == target.destination &&
               (a.transport.empty() || a.transport == target.transport);
    };
    for (const auto& [a, h] : book.holds())
        if (matches(a))
            list.push_back(
                line_json({Bound::stop, 0, "admin", hold_text(a.text(), h, now), false}));
    for (const auto& [a, c] : book.caps())
        if (matches(a))
            list.push_back(line_json({Bound::concurrency, double(c.concurrency), "admin",
                                      cap_text(a.text(), c, now), false}));
    return list;
}

} // namespace

control::Json explain_reply(const ControlSources& src, const control::Target& asked) {
    const int64_t now = src.clock.now();
    const control::Target target = named(src.sched, asked);
    std::vector<const core::Queue*> queues = queues_named(src.sched, target);
    Json provider = nullptr;
    if (queues.empty() && target.transport.empty() && src.explain.provider_queues) {
        if (auto members = src.explain.provider_queues(target.text)) {
            provider = target.text;
            for (const core::AdminTarget& m : *members)
                if (const core::Queue* q = src.sched.find_queue(m.transport, m.queue))
                    queues.push_back(q);
        }
    }
    Json list = Json::array();
    for (const core::Queue* q : queues)
        list.push_back(queue_json(src, *q->transport, *q, now));
    Json j = control::object_with_room(5);
    j["ok"] = true;
    j["target"] = target.text;
    j["provider"] = std::move(provider);
    j["queues"] = std::move(list);
    if (queues.empty()) {
        j["note"] = "no queue of " + target.text +
                    " is in the active queue now: none of its mail is being delivered or waits "
                    "for an agent";
        j["kept"] = kept_settings(src.sched.limits(), target, now);
    }
    return j;
}

} // namespace cqmgr::qmgr
