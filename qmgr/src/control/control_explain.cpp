#include "control_explain.hpp"

#include "cluster_limits.hpp"
#include "control_queries.hpp"
#include "control_time.hpp"
#include "deferred_index.hpp"

#include <unordered_set>

namespace cqmgr::qmgr {

namespace {

using Json = control::Json;
using Bound = LimitLine::Bound;

// "2026-11-24T06:00:00Z (in 300s)", or "... (300s ago)".
std::string when_text(int64_t t, int64_t now) {
    std::string s = iso_utc(t);
    if (t >= now) return s + " (in " + std::to_string(t - now) + "s)";
    return s + " (" + std::to_string(now - t) + "s ago)";
}

// " until T", or `open` when it ends only when an administrator ends it.
std::string until_words(int64_t until, int64_t now, const std::string& open) {
    return until > 0 ? " until " + when_text(until, now) : open;
}

// Who set an administrator's setting, and when, if known.
std::string set_by(int64_t uid, int64_t since, int64_t now) {
    return " by uid " + std::to_string(uid) + (since > 0 ? " at " + when_text(since, now) : "");
}

// A suspension of `target` in words.
std::string hold_text(const std::string& target, const core::AdminHold& h, int64_t now) {
    return "suspend " + target + set_by(h.uid, h.since, now) +
           until_words(h.until, now, " until cqmgrctl resume") +
           (h.reason.empty() ? "" : ": " + h.reason);
}

// A throttle of `target` in words.
std::string cap_text(const std::string& target, const core::AdminCap& c, int64_t now) {
    return "throttle " + target + set_by(c.uid, c.since, now) +
           until_words(c.until, now, " until cqmgrctl unthrottle");
}

// "4.4.1 reason" of a hop status.
std::string dsn_text(const std::optional<core::Dsn>& dsn) {
    if (!dsn) return "no reason recorded";
    return dsn->status.empty() ? dsn->reason : dsn->status + " " + dsn->reason;
}

// What an administrator's setting of `which` for queue `q` names: its own
// target, else its name on every transport (LimitBook::covering).
template <class Map> std::string admin_target(const Map& m, const core::Queue& q) {
    core::AdminTarget own{q.transport->name, q.name};
    return (m.count(own) ? own : core::AdminTarget{{}, q.name}).text();
}

// Another destination of `t` than `q` could start a delivery now: the
// test of share.cpp's destination_waits(), without `q` itself.
bool others_wait(const core::Transport& t, const core::Queue& q) {
    for (const core::Queue& o : t.queues_rr)
        if (&o != &q && o.may_start() && o.selectable_count() > 0 &&
            o.select_window() > o.busy_count())
            return true;
    return false;
}

// A rate of one delivery every `seconds`.
double every(double seconds) {
    return 1.0 / seconds;
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
// `concurrency`: its effective concurrency.
Json next_retry_json(const ExplainSubject& s, int concurrency) {
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
    else if (q.suspended)
        at(q.timer_due, "pausing for its rate delay until " + iso_utc(q.timer_due));
    else if (q.todo_count() == 0)
        at(0, "nothing waits in the active queue");
    else if (concurrency > q.busy_count())
        at(s.now, "now: its mail waits for a delivery agent");
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
    j["next_retry"] = next_retry_json(s, e.concurrency);
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

void dead_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    if (t.dead)
        lines.push_back({Bound::stop, 0, "dead",
                         "the transport " + t.name + " is dead (" + dsn_text(t.dsn) + ") until " +
                             when_text(t.dead_until, s.now)});
    if (q.dead())
        lines.push_back({Bound::stop, 0, "dead",
                         "the destination is dead (" + dsn_text(q.dsn) + ") until " +
                             when_text(q.timer_due, s.now)});
}

void admin_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    const core::LimitBook& book = s.src.sched.limits();
    if (t.hold) lines.push_back({Bound::stop, 0, "admin", hold_text(t.name, *t.hold, s.now)});
    if (const auto& h = q.limits.hold)
        lines.push_back(
            {Bound::stop, 0, "admin", hold_text(admin_target(book.holds(), q), *h, s.now)});
    if (const auto& c = q.limits.cap)
        lines.push_back({Bound::concurrency, double(c->concurrency), "admin",
                         cap_text(admin_target(book.caps(), q), *c, s.now)});
}

void cluster_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const std::optional<int>& gate = s.queue.limits.gate;
    auto v = s.src.cluster ? s.src.cluster->gate_view(s.queue) : std::nullopt;
    if (!v) {
        // A gate of the driver's that no cluster limit explains.
        if (gate)
            lines.push_back({Bound::concurrency, double(*gate), "gate",
                             "the queue manager's gate on this destination"});
        return;
    }
    if (v->mark_pending)
        lines.push_back(
            {Bound::stop, 0, "cluster", "its shared dead mark is being read (cqmgr_redis_server)"});
    if (v->allowance) {
        std::string d = "the cluster gate: ";
        if (v->limit > 0)
            d += "cqmgr_cluster_concurrency_limits " + v->lease_scope + " = " +
                 std::to_string(v->limit) +
                 " across the cluster; leases held here: " + std::to_string(v->leases) +
                 " by this destination, " + std::to_string(v->scope_leases) + " in the scope" +
                 (v->shared ? " (shared through Redis; the cluster-wide count is not read here)"
                            : " (Redis away: this host keeps the limit alone)");
        if (v->rate)
            d += std::string(v->limit > 0 ? "; " : "") +
                 "rate tokens held: " + std::to_string(v->tokens);
        lines.push_back({Bound::concurrency, double(*v->allowance), "cluster", d});
    }
    if (v->rate)
        lines.push_back(
            {Bound::rate,
             static_cast<double>(v->rate->count) * 1000.0 / static_cast<double>(v->rate->period_ms),
             "cluster",
             "cqmgr_rate_limits " + v->rate_scope + " = " + v->rate->text() +
                 (v->rate_shared ? " (the cluster's cell in Redis)"
                                 : " (a local cell: Redis away)")});
}

void learned_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Queue& q = s.queue;
    const core::LearnedLimit& l = q.limits.learned;
    if (!l.any()) return;
    const AdaptiveLimits* adaptive = s.src.adaptive;
    std::string why;
    if (const AdaptiveLimits::Cause* c = adaptive ? adaptive->cause(q) : nullptr)
        why = " from \"" + (c->status.empty() ? c->text : c->status + " " + c->text) + "\" (" +
              reply_class_name(c->cls) + ") at " + when_text(c->when, s.now);
    if (l.concurrency > 0) {
        bool slow = adaptive && adaptive->slow_start(q);
        lines.push_back({Bound::concurrency, double(l.concurrency), "learned",
                         slow ? "slow start: nothing learned yet, this many at once until "
                                "deliveries succeed (cqmgr_adaptive_limit_transports)"
                              : "learned concurrency limit" + why});
    }
    if (l.rate_delay > 0) {
        lines.push_back({Bound::concurrency, 1, "learned",
                         "one delivery at a time while a learned pause applies"});
        lines.push_back({Bound::rate, every(l.rate_delay), "learned",
                         "a pause of " + std::to_string(l.rate_delay) +
                             "s after each delivery, learned" + why});
    }
}

void share_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    if (q.limits.share > 0) {
        const int full = core::share_full(t);
        std::string d = "cqmgr_destination_agent_share = " + std::to_string(t.cfg.dest_share) +
                        "% of the process limit " + std::to_string(t.cfg.process_limit) + ": " +
                        std::to_string(full) + " agents";
        if (q.limits.share < full)
            d += q.limits.share_always ? "; a probe of one delivery after its death (binds always)"
                                       : "; lowered to " + std::to_string(q.limits.share) +
                                             " after slow or timed-out deliveries";
        if (!q.limits.share_always)
            d += s.others_wait ? "; binds while another destination of " + t.name +
                                     " waits for an agent, as one does now"
                               : "; not in force: no other destination of " + t.name +
                                     " waits for an agent now";
        lines.push_back({Bound::concurrency, double(q.limits.share), "share", d,
                         s.others_wait || q.limits.share_always});
    }
    // The lanes bound the transport's deliveries, not this destination's:
    // shown, never binding here.
    if (int cap = core::lane_cap(t); cap >= 0)
        lines.push_back(
            {Bound::concurrency, double(cap), "share",
             "cqmgr_urgent_agent_share = " + std::to_string(t.cfg.urgent_share) +
                 "%: mail other than urgent may have this many deliveries in flight on " + t.name +
                 " (" + std::to_string(core::lane_other_busy(t)) + " now" +
                 (core::lane_capped(t) ? ", at the cap" : "") + "); the whole transport",
             false});
    if (t.cfg.bulk_share > 0)
        lines.push_back({Bound::concurrency, double(t.cfg.bulk_share), "share",
                         "cqmgr_bulk_agent_share: this percentage of " + t.name +
                             "'s deliveries in flight is kept for mail other than urgent "
                             "while it waits; the whole transport",
                         false});
}

void main_cf_lines(const ExplainSubject& s, std::vector<LimitLine>& lines) {
    const core::Transport& t = s.transport;
    const core::Queue& q = s.queue;
    const core::TransportConfig& c = t.cfg;
    const std::string& n = t.name;
    if (c.dest_concurrency_limit > 0)
        lines.push_back(
            {Bound::concurrency, double(c.dest_concurrency_limit), "main.cf",
             n + "_destination_concurrency_limit" +
                 (c.dest_rate_delay > 0 ? " (1 while " + n + "_destination_rate_delay is set)"
                                        : std::string())});
    lines.push_back({Bound::concurrency, double(q.window), "main.cf",
                     "the concurrency window now (from " + n + "_initial_destination_concurrency " +
                         std::to_string(c.init_dest_concurrency) +
                         ", moved by the concurrency feedback)"});
    if (c.dest_rate_delay > 0)
        lines.push_back({Bound::rate, every(c.dest_rate_delay), "main.cf",
                         n + "_destination_rate_delay " + std::to_string(c.dest_rate_delay) + "s" +
                             (q.suspended ? "; pausing until " + when_text(q.timer_due, s.now)
                                          : std::string())});
    if (c.transport_rate_delay > 0)
        lines.push_back({Bound::rate, every(c.transport_rate_delay), "main.cf",
                         n + "_transport_rate_delay " + std::to_string(c.transport_rate_delay) +
                             "s (the whole transport)"});
}

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
