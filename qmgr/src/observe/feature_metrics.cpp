#include "feature_metrics.hpp"

#include "metric_family.hpp"

#include <algorithm>
#include <map>

namespace cqmgr::qmgr {

using namespace metric_family;

namespace {

// The reply rules' actions, in FeatureSnapshot::Transport::actions' order.
constexpr const char* action_names[] = {"suspend", "throttle", "rate"};

// Counts bound `rule` in force on transport `t`, by what it does (a
// backoff both caps and paces).
void count_rule(FeatureSnapshot::Transport& t, const core::RuleLimit& rule) {
    t.actions[0] += rule.hold ? 1 : 0;
    t.actions[1] += rule.concurrency > 0 ? 1 : 0;
    t.actions[2] += rule.pause > 0 ? 1 : 0;
}

void limit_families(std::vector<MetricFamily>& out, const FeatureSnapshot& s) {
    auto gauge = [&out](std::string name, std::string help, int64_t v) {
        sample(family(out, std::move(name), std::move(help), MetricType::Gauge), {},
               static_cast<double>(v));
    };
    gauge("cqmgr_active_messages_limit",
          "qmgr_message_active_limit: messages the active "
          "queue may hold",
          s.active_limit);
    gauge("cqmgr_active_recipients_limit",
          "qmgr_message_recipient_limit: recipients that may "
          "be in memory",
          s.recipient_limit);
    gauge("cqmgr_maximal_queue_lifetime_seconds",
          "maximal_queue_lifetime: how long a message "
          "may be deferred before it is returned",
          s.queue_lifetime);
    gauge("cqmgr_bounce_queue_lifetime_seconds",
          "bounce_queue_lifetime: the same for a "
          "non-delivery notice",
          s.bounce_lifetime);
}

void transport_families(std::vector<MetricFamily>& out, const FeatureSnapshot& s) {
    auto& learned = family(out, "cqmgr_learned_limits",
                           "Destinations with a limit the adaptive limits learned from replies",
                           MetricType::Gauge);
    for (const auto& t : s.transports)
        sample(learned, {{"transport", t.name}}, t.learned);
    auto& actions = family(out, "cqmgr_reply_actions_in_force",
                           "Destinations or transports, and sender groups' mail to a destination, "
                           "bound by a reply rule's action, by action",
                           MetricType::Gauge);
    for (const auto& t : s.transports)
        for (size_t a = 0; a < t.actions.size(); ++a)
            sample(actions, {{"transport", t.name}, {"action", action_names[a]}}, t.actions[a]);
}

// Only what is configured: no series for Redis without cqmgr_redis_server,
// none for the store with cqmgr_state_database empty.
void shared_families(std::vector<MetricFamily>& out, const FeatureSnapshot& s) {
    // Each family is filled before the next is added (family()'s reference
    // does not outlive that).
    if (!s.shared.empty()) {
        auto& up =
            family(out, "cqmgr_redis_up", "1 while the cluster limits' connection to Redis is up",
                   MetricType::Gauge);
        for (const auto& sh : s.shared)
            sample(up, {{"limits", sh.limits}}, sh.up ? 1 : 0);
        auto& leases = family(out, "cqmgr_cluster_leases",
                              "Cluster concurrency leases this host holds", MetricType::Gauge);
        for (const auto& sh : s.shared)
            sample(leases, {{"limits", sh.limits}}, sh.leases);
    }
    if (s.state_up) {
        sample(family(out, "cqmgr_state_store_up",
                      "1 while the state store is open and its last commit went through",
                      MetricType::Gauge),
               {}, *s.state_up ? 1 : 0);
        sample(family(out, "cqmgr_state_store_commits_total",
                      "Commits of changed destination records to the state store",
                      MetricType::Counter),
               {}, static_cast<double>(s.state_commits));
    }
}

} // namespace

FeatureSnapshot feature_snapshot(const core::Scheduler& sched, const conf::QmgrParams& params) {
    FeatureSnapshot s;
    s.active_limit = params.qmgr_message_active_limit;
    s.recipient_limit = params.qmgr_message_recipient_limit;
    s.queue_lifetime = params.maximal_queue_lifetime;
    s.bounce_lifetime = params.bounce_queue_lifetime;
    std::map<std::string, FeatureSnapshot::Transport> by_name;
    for (const auto& [name, t] : sched.transports())
        by_name[name].name = name;
    for (const auto& [target, limit] : sched.limits().learned())
        if (limit.any()) {
            auto& t = by_name[target.transport];
            t.name = target.transport;
            t.learned++;
        }
    for (const auto& [target, rule] : sched.limits().rules()) {
        auto& t = by_name[target.transport];
        t.name = target.transport;
        count_rule(t, rule);
    }
    for (auto& [name, t] : by_name)
        s.transports.push_back(std::move(t));
    return s;
}

void count_sender_rule(FeatureSnapshot& s, const std::string& transport,
                       const core::RuleLimit& rule) {
    auto it = std::lower_bound(
        s.transports.begin(), s.transports.end(), transport,
        [](const FeatureSnapshot::Transport& t, const std::string& name) { return t.name < name; });
    if (it == s.transports.end() || it->name != transport) {
        it = s.transports.insert(it, FeatureSnapshot::Transport());
        it->name = transport;
    }
    count_rule(*it, rule);
}

void feature_families(std::vector<MetricFamily>& out, const FeatureSnapshot& s) {
    limit_families(out, s);
    transport_families(out, s);
    shared_families(out, s);
}

} // namespace cqmgr::qmgr
