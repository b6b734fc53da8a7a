#include "control_queries.hpp"

#include "cluster_limits.hpp"
#include "providers.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace cqmgr::qmgr {

namespace {

using Json = control::Json;

// Seconds from `then` to `now`, rounded to milliseconds.
double seconds_between(protocol::TimeVal then, protocol::TimeVal now) {
    double s =
        static_cast<double>(now.sec - then.sec) + static_cast<double>(now.usec - then.usec) / 1e6;
    return std::round(std::max(s, 0.0) * 1000) / 1000;
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
    Json j = control::object_with_room(4);
    j["transport"] = e.queue->transport->name;
    j["queue"] = e.queue->name;
    j["state"] = state;
    Json rcpts = Json::array();
    for (const auto& r : e.rcpts)
        rcpts.push_back(r.address());
    j["recipients"] = std::move(rcpts);
    return j;
}

// The sizes and oldest ages of incoming, active and deferred, as the
// metrics show them; null where not known yet.
Json mail_queues(const FeedState& fs) {
    constexpr const char* names[] = {"incoming", "active", "deferred"};
    Json j = control::object_with_room(3);
    for (size_t i = 0; i < fs.queues.size(); ++i) {
        const auto& q = fs.queues[i];
        Json one;
        one["messages"] = q ? Json(static_cast<uint64_t>(q->messages)) : Json(nullptr);
        one["oldest_age"] =
            q && q->oldest_known ? Json(std::round(q->oldest_age * 1000) / 1000) : Json(nullptr);
        j[names[i]] = std::move(one);
    }
    return j;
}

} // namespace

ControlQueries::ControlQueries(ControlSources sources, ControlIdentity identity)
    : src_(std::move(sources)), id_(std::move(identity)) {}

const Json& ControlQueries::answer(const control::Request& r) const {
    using control::Verb;
    switch (r.verb) {
    case Verb::help:
        return reply_ = help();
    case Verb::summary:
        return reply_ = summary();
    case Verb::queues:
        return queues(r.transport);
    case Verb::jobs:
        return reply_ = jobs(r.transport);
    case Verb::message:
        return reply_ = message(r.queue_id);
    case Verb::deliveries:
        return reply_ = deliveries();
    case Verb::providers:
        return reply_ = providers();
    case Verb::explain:
        return reply_ = explain(*r.target);
    default:
        return reply_ = control::error_reply("not a query");
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
    if (auto first = src_.arrivals.oldest()) oldest = seconds_between(*first, now);

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
    j["mail_queues"] = mail_queues(fs);
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
    // The same hop statuses under the name that says what they count: a
    // hop status is set only when the destination failed.
    counters["destination_failures"] = {{"4", dsn[4]}, {"5", dsn[5]}};
    counters["messages"] = {{"removed", c.messages_removed},
                            {"deferred", c.messages_deferred},
                            {"bounced", c.messages_bounced},
                            {"expired", c.messages_expired}};
    counters["messages_activated"] = c.messages_activated;
    j["counters"] = std::move(counters);
    return j;
}

const Json& ControlQueries::queues(const std::string& only) const {
    return queues_.fill(src_, transports_of(src_.sched, only));
}

// At most this many jobs per transport in a `jobs` reply.
constexpr size_t max_jobs_listed = 500;

Json ControlQueries::jobs(const std::string& only) const {
    Json list = Json::array();
    for (const core::Transport* t : transports_of(src_.sched, only)) {
        // The head of the job list is what scheduling acts on; all of a
        // list of 20,000 jobs would hold the loop for ~40 ms.
        Json jobs = Json::array();
        for (const core::Job& job : t->job_list) {
            if (jobs.size() == max_jobs_listed) break;
            jobs.push_back(job_state(*t, job));
        }
        Json tj;
        tj["name"] = t->name;
        tj["jobs"] = std::move(jobs);
        tj["jobs_total"] = t->job_list.size();
        list.push_back(std::move(tj));
    }
    Json j;
    j["ok"] = true;
    j["transports"] = std::move(list);
    return j;
}

Json ControlQueries::job_state(const core::Transport& t, const core::Job& job) const {
    Json j = control::object_with_room(14);
    j["queue_id"] = job.message->id;
    j["lane"] = core::lane_name(job.message->lane);
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
    j["peers"] = job.peer_by_queue.size();
    return j;
}

Json ControlQueries::message(const std::string& queue_id) const {
    const Message* found = src_.messages.find(queue_id);
    if (!found) return control::error_reply("no such message in the active queue");
    const Message& m = *found;
    Json entries = Json::array();
    for (const core::Job* job : m.jobs)
        for (const core::Peer& p : job->peers)
            for (const core::Entry& e : p.entries)
                entries.push_back(entry_state(e, p.held == &e ? "held" : "waiting"));
    // Busy entries are on no list of their message: they are the ones in
    // flight.
    for (const auto& f : src_.deliveries.in_flight())
        if (f.entry->message == &m) entries.push_back(entry_state(*f.entry, "busy"));
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
    for (const auto& f : src_.deliveries.in_flight())
        v.emplace_back(f.started, f.entry);
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

Json ControlQueries::providers() const {
    Json list = Json::array();
    if (src_.providers) {
        for (const auto& [name, members] : src_.providers->members()) {
            Json ms = Json::array();
            int in_flight = 0;
            // Each scope of the provider's limits once, in order.
            std::map<std::string, Json> scopes;
            for (const auto& [transport, queue] : members) {
                const core::Queue* q = src_.sched.find_queue(transport, queue);
                int busy = q ? q->busy_count() : 0;
                in_flight += busy;
                Json m;
                m["transport"] = transport;
                m["queue"] = queue;
                m["in_flight"] = busy;
                ms.push_back(std::move(m));
                if (!src_.provider_limits) continue;
                auto v = src_.provider_limits->view(transport, queue);
                if (!v) continue;
                if (v->limit > 0 && !scopes.contains(v->lease_scope)) {
                    Json s;
                    s["scope"] = v->lease_scope;
                    s["concurrency"] = v->limit;
                    s["in_flight_here"] = src_.provider_limits->scope_busy(v->lease_scope);
                    s["leases_held"] = src_.provider_limits->scope_leases(v->lease_scope);
                    scopes.emplace(v->lease_scope, std::move(s));
                }
                if (v->rate && !scopes.contains(v->rate_scope)) {
                    Json s;
                    s["scope"] = v->rate_scope;
                    s["rate"] = v->rate->text();
                    scopes.emplace(v->rate_scope, std::move(s));
                }
            }
            Json limits = Json::array();
            for (auto& [scope, s] : scopes)
                limits.push_back(std::move(s));
            Json p;
            p["provider"] = name;
            p["in_flight"] = in_flight;
            p["limits"] = std::move(limits);
            p["members"] = std::move(ms);
            list.push_back(std::move(p));
        }
    }
    Json j;
    j["ok"] = true;
    j["providers"] = std::move(list);
    return j;
}

Json ControlQueries::explain(const control::Target& target) const {
    return explain_reply(src_, target);
}

} // namespace cqmgr::qmgr
