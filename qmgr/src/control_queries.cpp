#include "control_queries.hpp"

#include <algorithm>
#include <cmath>

namespace cqmgr::qmgr {

namespace {

using Json = control::Json;

// Seconds from `then` to `now`, rounded to milliseconds.
double seconds_between(protocol::TimeVal then, protocol::TimeVal now) {
    double s =
        static_cast<double>(now.sec - then.sec) + static_cast<double>(now.usec - then.usec) / 1e6;
    return std::round(std::max(s, 0.0) * 1000) / 1000;
}

// {"status":..., "reason":..., "until":...} of a dead transport or queue.
Json dead_state(const std::optional<core::Dsn>& dsn, int64_t until) {
    Json j;
    j["status"] = dsn ? dsn->status : std::string();
    j["reason"] = dsn ? dsn->reason : std::string();
    j["until"] = until > 0 ? Json(until) : Json(nullptr);
    return j;
}

const char* phase_name(Message::Phase p) {
    switch (p) {
    case Message::Phase::reading:
        return "reading";
    case Message::Phase::waiting:
        return "waiting";
    case Message::Phase::finishing:
        return "finishing";
    }
    return "unknown";
}

// The transports a `queues` or `jobs` reply covers, by name.
std::vector<const core::Transport*> transports_of(const core::Scheduler& sched,
                                                  const std::string& only) {
    std::vector<const core::Transport*> v;
    for (const auto& [name, t] : sched.transports())
        if (only.empty() || name == only) v.push_back(t.get());
    return v;
}

// One entry of a message's reply.
Json entry_state(const core::Entry& e, const char* state) {
    Json j;
    j["transport"] = e.queue->transport->name;
    j["queue"] = e.queue->name;
    j["state"] = state;
    Json rcpts = Json::array();
    for (const auto& r : e.rcpts)
        rcpts.push_back(r.address);
    j["recipients"] = std::move(rcpts);
    return j;
}

} // namespace

ControlQueries::ControlQueries(ControlSources sources, ControlIdentity identity)
    : src_(std::move(sources)), id_(std::move(identity)) {}

Json ControlQueries::answer(const control::Request& r) const {
    using control::Verb;
    switch (r.verb) {
    case Verb::help:
        return help();
    case Verb::summary:
        return summary();
    case Verb::queues:
        return queues(r.transport);
    case Verb::jobs:
        return jobs(r.transport);
    case Verb::message:
        return message(r.queue_id);
    case Verb::deliveries:
        return deliveries();
    default:
        return control::error_reply("not a query");
    }
}

Json ControlQueries::help() const {
    Json j;
    j["ok"] = true;
    j["requests"] = control::usage_lines();
    return j;
}

Json ControlQueries::summary() const {
    protocol::TimeVal now = src_.clock.precise();
    const Counters& c = src_.counters;

    // The oldest message by its arrival in the queue (not in active).
    Json oldest = nullptr;
    if (!src_.messages.empty()) {
        protocol::TimeVal first{INT64_MAX, 0};
        for (const auto& [id, m] : src_.messages) {
            protocol::TimeVal a{m->env.arrival_sec, m->env.arrival_usec};
            if (a.sec < first.sec || (a.sec == first.sec && a.usec < first.usec)) first = a;
        }
        oldest = seconds_between(first, now);
    }

    Json j;
    j["ok"] = true;
    j["pid"] = id_.pid;
    j["version"] = id_.version;
    j["uptime"] = seconds_between(id_.started, now);
    Json active;
    active["messages"] = src_.messages.size();
    active["recipients"] = src_.sched.recipient_count();
    active["message_limit"] = src_.message_active_limit;
    active["recipient_limit"] = src_.message_recipient_limit;
    active["oldest_age"] = std::move(oldest);
    j["active"] = std::move(active);

    FeedState fs = src_.feed ? src_.feed() : FeedState{};
    Json feed;
    feed["paused"] = fs.paused;
    feed["scanning"] = fs.scanning;
    feed["in_flow_tokens_written"] = c.in_flow_tokens;
    j["feed"] = std::move(feed);
    j["resolver"] = {{"requests", c.resolver_requests}, {"cache_hits", c.resolver_cache_hits}};
    j["transports"] = src_.sched.transports().size();
    j["queues"] = src_.sched.queue_count();
    j["deliveries_in_flight"] = src_.deliveries.in_flight().size();

    // Totals over the transports: by result, and by hop status class.
    std::array<uint64_t, 4> result{};
    std::array<uint64_t, 6> dsn{};
    for (const auto& [t, by_result] : c.deliveries_by_class)
        for (size_t r = 0; r < by_result.size(); ++r)
            for (size_t i = 0; i < dsn.size(); ++i) {
                result[r] += by_result[r][i];
                dsn[i] += by_result[r][i];
            }
    using R = Counters::Result;
    Json counters;
    counters["deliveries"] = {{"done", result[size_t(R::done)]},
                              {"deferred", result[size_t(R::deferred)]},
                              {"crashed", result[size_t(R::crashed)]},
                              {"unavailable", result[size_t(R::unavailable)]}};
    counters["dsn_class"] = {{"2", dsn[2]}, {"4", dsn[4]}, {"5", dsn[5]}};
    counters["messages"] = {{"removed", c.messages_removed},
                            {"deferred", c.messages_deferred},
                            {"bounced", c.messages_bounced},
                            {"expired", c.messages_expired}};
    counters["messages_activated"] = c.messages_activated;
    j["counters"] = std::move(counters);
    return j;
}

Json ControlQueries::queues(const std::string& only) const {
    Json list = Json::array();
    std::vector<const core::Queue*> qs;
    for (const core::Transport* t : transports_of(src_.sched, only)) {
        Json tj = transport_state(*t);
        // Destinations by name, so that a poller sees a stable order.
        qs.clear();
        qs.reserve(t->queue_by_name.size());
        for (const auto& [name, q] : t->queue_by_name)
            qs.push_back(q.get());
        std::sort(qs.begin(), qs.end(),
                  [](const core::Queue* a, const core::Queue* b) { return a->name < b->name; });
        Json qlist = Json::array();
        int busy = 0, todo = 0;
        for (const core::Queue* q : qs) {
            busy += q->busy_count();
            todo += q->todo_count();
            qlist.push_back(queue_state(*t, *q));
        }
        tj["busy"] = busy;
        tj["todo"] = todo;
        tj["queues"] = std::move(qlist);
        list.push_back(std::move(tj));
    }
    Json j;
    j["ok"] = true;
    j["transports"] = std::move(list);
    return j;
}

Json ControlQueries::transport_state(const core::Transport& t) const {
    Json j;
    j["name"] = t.name;
    j["dead"] = t.dead ? dead_state(t.dsn, t.dead_until) : Json(nullptr);
    j["suspended"] = nullptr;
    j["busy"] = 0; // set by the caller, who walks the queues anyway
    j["todo"] = 0;
    j["pending_connections"] = t.pending;
    j["rate_delay"] = t.cfg.transport_rate_delay;
    j["rate_locked"] = t.rate_locked;
    j["concurrency_limit"] = t.cfg.dest_concurrency_limit;
    if (annotate_) annotate_(t, nullptr, j);
    return j;
}

Json ControlQueries::queue_state(const core::Transport& t, const core::Queue& q) const {
    Json j;
    j["name"] = q.name;
    j["nexthop"] = q.nexthop;
    j["window"] = q.window;
    j["busy"] = q.busy_count();
    j["todo"] = q.todo_count();
    j["held"] = q.held;
    // A dead queue's reason is already in the words stock logs for its
    // recipients ("delivery temporarily suspended: ...").
    j["dead"] = q.dead() ? dead_state(q.dsn, q.timer_due) : Json(nullptr);
    j["suspended"] = nullptr;
    j["throttle"] = nullptr;
    if (const DeliveryRecord::LastDsn* last = src_.deliveries.last_dsn(q))
        j["last_dsn"] = {
            {"status", last->dsn.status}, {"reason", last->dsn.reason}, {"when", last->when}};
    else
        j["last_dsn"] = nullptr;
    j["cohort"] = {
        {"success", q.success}, {"failure", q.failure}, {"fail_cohorts", q.fail_cohorts}};
    Json rate;
    rate["seconds"] = t.cfg.dest_rate_delay;
    rate["waiting"] = q.suspended;
    rate["until"] = q.suspended && q.timer_due > 0 ? Json(q.timer_due) : Json(nullptr);
    j["rate_delay"] = std::move(rate);
    // What the adaptive limits learned here (null: nothing).
    if (q.learned.any()) {
        Json learned;
        learned["concurrency"] =
            q.learned.concurrency > 0 ? Json(q.learned.concurrency) : Json(nullptr);
        learned["rate_delay"] =
            q.learned.rate_delay > 0 ? Json(q.learned.rate_delay) : Json(nullptr);
        j["learned"] = std::move(learned);
    } else {
        j["learned"] = nullptr;
    }
    if (annotate_) annotate_(t, &q, j);
    return j;
}

// At most this many jobs per transport in a `jobs` reply.
constexpr size_t max_jobs_listed = 500;

Json ControlQueries::jobs(const std::string& only) const {
    Json list = Json::array();
    for (const core::Transport* t : transports_of(src_.sched, only)) {
        // The head of the job list is what scheduling acts on; all of a
        // list of 20,000 jobs would hold the loop for ~40 ms.
        Json jobs = Json::array();
        size_t total = 0;
        for (const core::Job& job : t->job_list)
            if (++total <= max_jobs_listed) jobs.push_back(job_state(*t, job));
        Json tj;
        tj["name"] = t->name;
        tj["jobs"] = std::move(jobs);
        tj["jobs_total"] = total;
        list.push_back(std::move(tj));
    }
    Json j;
    j["ok"] = true;
    j["transports"] = std::move(list);
    return j;
}

Json ControlQueries::job_state(const core::Transport& t, const core::Job& job) const {
    Json j;
    j["queue_id"] = job.message->id;
    j["current"] = t.job_current == &job;
    j["stack_level"] = job.stack_level;
    j["parent"] = job.stack_parent ? Json(job.stack_parent->message->id) : Json(nullptr);
    j["slots_used"] = job.slots_used;
    j["slots_available"] = job.slots_available;
    j["selected_entries"] = job.selected_entries;
    j["read_entries"] = job.read_entries;
    j["rcpt_count"] = job.rcpt_count;
    j["rcpt_limit"] = job.rcpt_limit;
    j["rcpt_unread"] = job.message->rcpt_unread;
    j["blocker"] = t.is_blocker(job);
    j["peers"] = job.peers.size();
    return j;
}

Json ControlQueries::message(const std::string& queue_id) const {
    auto it = src_.messages.find(queue_id);
    if (it == src_.messages.end())
        return control::error_reply("no such message in the active queue");
    const Message& m = *it->second;
    Json entries = Json::array();
    for (const core::Job* job : m.jobs)
        for (const core::Peer& p : job->peers)
            for (const core::Entry& e : p.entries)
                entries.push_back(entry_state(e, p.held == &e ? "held" : "waiting"));
    // Busy entries are on no list of their message: they are the ones in
    // flight.
    for (const auto& [e, started] : src_.deliveries.in_flight())
        if (e->message == &m) entries.push_back(entry_state(*e, "busy"));
    Json j;
    j["ok"] = true;
    j["queue_id"] = m.id;
    j["phase"] = phase_name(m.phase);
    j["queued"] = m.env.arrival_sec;
    j["active_since"] = m.active_arrival.sec;
    j["recipients_in_core"] = m.rcpt_count;
    j["recipients_unread"] = m.rcpt_unread;
    j["entries"] = std::move(entries);
    return j;
}

Json ControlQueries::deliveries() const {
    protocol::TimeVal now = src_.clock.precise();
    std::vector<std::pair<protocol::TimeVal, const core::Entry*>> v;
    v.reserve(src_.deliveries.in_flight().size());
    for (const auto& [e, started] : src_.deliveries.in_flight())
        v.emplace_back(started, e);
    // Oldest first.
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
        return a.first.sec != b.first.sec ? a.first.sec < b.first.sec : a.first.usec < b.first.usec;
    });
    Json list = Json::array();
    for (const auto& [started, e] : v) {
        Json d;
        d["transport"] = e->queue->transport->name;
        d["queue"] = e->queue->name;
        d["queue_id"] = e->message->id;
        d["recipients"] = e->rcpts.size();
        d["age"] = seconds_between(started, now);
        list.push_back(std::move(d));
    }
    Json j;
    j["ok"] = true;
    j["deliveries"] = std::move(list);
    return j;
}

} // namespace cqmgr::qmgr
