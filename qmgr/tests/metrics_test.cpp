// The Prometheus metrics built from a snapshot: names, labels, values, the
// cap on per-destination series, and the text a scrape returns.
#include "health.hpp"
#include "metrics.hpp"
#include "queue_metrics.hpp"

#include <gtest/gtest.h>
#include <map>
#include <prometheus/check_names.h>
#include <prometheus/text_serializer.h>
#include <set>

using namespace cqmgr::qmgr;
namespace core = cqmgr::core;
namespace protocol = cqmgr::protocol;
using prometheus::MetricFamily;
using prometheus::MetricType;

namespace {
const MetricFamily& find(const std::vector<MetricFamily>& fs, const std::string& name) {
    for (const auto& f : fs)
        if (f.name == name) return f;
    throw std::runtime_error("no family " + name);
}

// The labels of a sample as "k=v,k=v".
std::string labels(const prometheus::ClientMetric& m) {
    std::string out;
    for (const auto& l : m.label)
        out += (out.empty() ? "" : ",") + l.name + "=" + l.value;
    return out;
}

// Every sample of a counter or gauge family, by its labels.
std::map<std::string, double> values(const MetricFamily& f) {
    std::map<std::string, double> out;
    for (const auto& m : f.metric)
        out[labels(m)] = f.type == MetricType::Counter ? m.counter.value : m.gauge.value;
    return out;
}

MetricsSnapshot::Destination dest(std::string t, std::string n, int window, int busy, int todo,
                                  bool dead = false, bool suspended = false,
                                  bool throttled = false) {
    return {std::move(t), std::move(n), window, busy, todo, dead, suspended, throttled};
}

MetricsSnapshot sample_snapshot() {
    MetricsSnapshot s;
    Counters& c = s.counters;
    c.count_delivery("smtp", Counters::Result::done, "", 0.02, 1.5);
    c.count_delivery("smtp", Counters::Result::done, "", 0.2, 700);
    c.count_delivery("smtp", Counters::Result::deferred, "4.4.1", 30, 0);
    c.count_delivery("smtp", Counters::Result::crashed, "", 1, 0);
    c.count_delivery("local", Counters::Result::done, "5.1.1", 0.001, 0.5);
    c.count_delivery("local", Counters::Result::deferred, "3.0.0", 0.001, 0.5);
    c.messages_activated = 7;
    c.messages_removed = 4;
    c.messages_deferred = 2;
    c.messages_quarantined = 1;
    c.messages_bounced = 1;
    c.messages_expired = 3;
    c.resolver_requests = 9;
    c.resolver_cache_hits = 5;
    c.in_flow_tokens = 11;
    s.active_messages = 3;
    s.active_recipients = 12;
    s.transports = {{"local", 2, 1, 0, 1, 0, false}, {"smtp", 13, 6, 9, 5, 1, false}};
    s.transports[1].lane_busy = {2, 3, 1};
    s.destinations = {dest("smtp", "a.example", 5, 3, 4),       dest("smtp", "b.example", 5, 1, 0),
                      dest("smtp", "c.example", 0, 0, 0, true), dest("smtp", "d.example", 2, 2, 5),
                      dest("smtp", "e.example", 1, 0, 0),       dest("local", "mailbox", 2, 1, 0)};
    return s;
}
} // namespace

TEST(Metrics, NamesFollowPrometheusConventions) {
    auto fs = build_metrics(sample_snapshot(), 50);
    std::set<std::string> names;
    for (const auto& f : fs) {
        EXPECT_TRUE(prometheus::CheckMetricName(f.name)) << f.name;
        EXPECT_TRUE(f.name.starts_with("cqmgr_")) << f.name;
        EXPECT_EQ(f.type == MetricType::Counter, f.name.ends_with("_total")) << f.name;
        EXPECT_FALSE(f.help.empty()) << f.name;
        EXPECT_TRUE(names.insert(f.name).second) << "twice: " << f.name;
        for (const auto& m : f.metric)
            for (const auto& l : m.label)
                EXPECT_TRUE(prometheus::CheckLabelName(l.name)) << l.name;
    }
    for (const char* n : {"cqmgr_deliveries_total",
                          "cqmgr_messages_activated_total",
                          "cqmgr_messages_ended_total",
                          "cqmgr_messages_bounced_total",
                          "cqmgr_messages_expired_total",
                          "cqmgr_resolver_requests_total",
                          "cqmgr_resolver_cache_hits_total",
                          "cqmgr_in_flow_tokens_written_total",
                          "cqmgr_active_messages",
                          "cqmgr_active_recipients",
                          "cqmgr_transport_window",
                          "cqmgr_transport_busy",
                          "cqmgr_transport_todo",
                          "cqmgr_transport_dead",
                          "cqmgr_transport_destinations",
                          "cqmgr_transport_dead_destinations",
                          "cqmgr_transport_suspended",
                          "cqmgr_transport_suspended_destinations",
                          "cqmgr_transport_throttled_destinations",
                          "cqmgr_transport_lane_busy",
                          "cqmgr_control_settings",
                          "cqmgr_destination_window",
                          "cqmgr_destination_busy",
                          "cqmgr_destination_todo",
                          "cqmgr_destination_dead",
                          "cqmgr_destination_suspended",
                          "cqmgr_destination_throttled",
                          "cqmgr_destination_share_lowered",
                          "cqmgr_queue_delay_seconds",
                          "cqmgr_delivery_duration_seconds",
                          "cqmgr_queue_messages",
                          "cqmgr_queue_oldest_age_seconds",
                          "cqmgr_event_loop_lag_seconds"})
        EXPECT_TRUE(names.contains(n)) << n;
}

TEST(Metrics, DeliveriesByTransportStatusAndClass) {
    auto v = values(find(build_metrics(sample_snapshot(), 50), "cqmgr_deliveries_total"));
    EXPECT_EQ(v.at("transport=smtp,status=done,dsn_class=none"), 2);
    EXPECT_EQ(v.at("transport=smtp,status=deferred,dsn_class=4"), 1);
    EXPECT_EQ(v.at("transport=smtp,status=crashed,dsn_class=none"), 1);
    EXPECT_EQ(v.at("transport=local,status=done,dsn_class=5"), 1);
    // The usual classes are there from the start, rare ones once seen;
    // class 2 is rare (agents report no hop status for a delivery).
    EXPECT_EQ(v.at("transport=smtp,status=unavailable,dsn_class=4"), 0);
    EXPECT_FALSE(v.contains("transport=smtp,status=unavailable,dsn_class=2"));
    EXPECT_FALSE(v.contains("transport=smtp,status=done,dsn_class=2"));
    EXPECT_EQ(v.at("transport=local,status=deferred,dsn_class=3"), 1);
    EXPECT_FALSE(v.contains("transport=smtp,status=done,dsn_class=3"));
    EXPECT_EQ(v.size(), 2 * 4 * 3 + 1);
}

TEST(Metrics, MessagesAndGauges) {
    auto fs = build_metrics(sample_snapshot(), 50);
    EXPECT_EQ(values(find(fs, "cqmgr_messages_activated_total")).at(""), 7);
    auto ended = values(find(fs, "cqmgr_messages_ended_total"));
    EXPECT_EQ(ended, (std::map<std::string, double>{
                         {"end=removed", 4}, {"end=deferred", 2}, {"end=corrupt", 1}}));
    EXPECT_EQ(values(find(fs, "cqmgr_messages_bounced_total")).at(""), 1);
    EXPECT_EQ(values(find(fs, "cqmgr_messages_expired_total")).at(""), 3);
    EXPECT_EQ(values(find(fs, "cqmgr_resolver_requests_total")).at(""), 9);
    EXPECT_EQ(values(find(fs, "cqmgr_resolver_cache_hits_total")).at(""), 5);
    EXPECT_EQ(values(find(fs, "cqmgr_in_flow_tokens_written_total")).at(""), 11);
    EXPECT_EQ(values(find(fs, "cqmgr_active_messages")).at(""), 3);
    EXPECT_EQ(values(find(fs, "cqmgr_active_recipients")).at(""), 12);
    EXPECT_EQ(values(find(fs, "cqmgr_transport_window")),
              (std::map<std::string, double>{{"transport=local", 2}, {"transport=smtp", 13}}));
    EXPECT_EQ(values(find(fs, "cqmgr_transport_todo")).at("transport=smtp"), 9);
    EXPECT_EQ(values(find(fs, "cqmgr_transport_dead_destinations")).at("transport=smtp"), 1);
    EXPECT_EQ(values(find(fs, "cqmgr_transport_dead")).at("transport=smtp"), 0);
    auto lanes = values(find(fs, "cqmgr_transport_lane_busy"));
    EXPECT_EQ(lanes.at("transport=smtp,lane=urgent"), 2);
    EXPECT_EQ(lanes.at("transport=smtp,lane=normal"), 3);
    EXPECT_EQ(lanes.at("transport=smtp,lane=bulk"), 1);
    EXPECT_EQ(lanes.at("transport=local,lane=urgent"), 0);
}

TEST(Metrics, EveryDestinationBelowTheCap) {
    auto fs = build_metrics(sample_snapshot(), 50);
    auto window = values(find(fs, "cqmgr_destination_window"));
    EXPECT_EQ(window.size(), 6u);
    EXPECT_EQ(window.at("transport=smtp,destination=a.example"), 5);
    EXPECT_EQ(values(find(fs, "cqmgr_destination_dead")).at("transport=smtp,destination=c.example"),
              1);
    EXPECT_FALSE(window.contains("transport=smtp,destination=other"));
}

TEST(Metrics, TheCapKeepsDeadAndBusiestAndSumsTheRestAsOther) {
    auto fs = build_metrics(sample_snapshot(), 3);
    // Kept: the dead c.example first, then the busiest by busy + todo:
    // a.example and d.example (7 each).
    auto busy = values(find(fs, "cqmgr_destination_busy"));
    auto todo = values(find(fs, "cqmgr_destination_todo"));
    auto window = values(find(fs, "cqmgr_destination_window"));
    auto dead = values(find(fs, "cqmgr_destination_dead"));
    EXPECT_EQ(busy, (std::map<std::string, double>{
                        {"transport=smtp,destination=a.example", 3},
                        {"transport=smtp,destination=c.example", 0},
                        {"transport=smtp,destination=d.example", 2},
                        {"transport=smtp,destination=other", 1},  // b.example, e.example
                        {"transport=local,destination=other", 1}, // mailbox
                    }));
    EXPECT_EQ(todo.at("transport=smtp,destination=other"), 0);
    EXPECT_EQ(window.at("transport=smtp,destination=other"), 6);
    EXPECT_EQ(window.at("transport=local,destination=other"), 2);
    EXPECT_EQ(dead.at("transport=smtp,destination=c.example"), 1);
    EXPECT_EQ(dead.at("transport=smtp,destination=other"), 0);

    // With no series per destination, "other" counts the dead ones.
    auto none = values(find(build_metrics(sample_snapshot(), 0), "cqmgr_destination_dead"));
    EXPECT_EQ(none, (std::map<std::string, double>{{"transport=local,destination=other", 0},
                                                   {"transport=smtp,destination=other", 1}}));
}

TEST(Metrics, SuspendedAndThrottledDestinationsAreKeptUnderTheCap) {
    MetricsSnapshot s = sample_snapshot();
    s.transports[1].suspended_destinations = 1;
    s.transports[1].throttled_destinations = 2;
    s.suspensions = 1;
    s.throttles = 3;
    // Idle destinations that an alert asks about: kept before the busiest.
    s.destinations.push_back(dest("smtp", "held.example", 5, 0, 0, false, true));
    s.destinations.push_back(dest("smtp", "capped.example", 1, 0, 0, false, false, true));
    s.destinations.push_back(dest("smtp", "capped2.example", 1, 0, 0, false, false, true));
    auto fs = build_metrics(s, 3);
    auto suspended = values(find(fs, "cqmgr_destination_suspended"));
    auto throttled = values(find(fs, "cqmgr_destination_throttled"));
    // Kept (by name): c.example (dead), capped.example, capped2.example and
    // held.example rank first; the cap of 3 takes the first three of them
    // in (transport, name) order.
    EXPECT_EQ(suspended, (std::map<std::string, double>{
                             {"transport=smtp,destination=c.example", 0},
                             {"transport=smtp,destination=capped.example", 0},
                             {"transport=smtp,destination=capped2.example", 0},
                             {"transport=smtp,destination=other", 1}, // held.example, a, b, d, e
                             {"transport=local,destination=other", 0},
                         }));
    EXPECT_EQ(throttled.at("transport=smtp,destination=capped.example"), 1);
    EXPECT_EQ(throttled.at("transport=smtp,destination=other"), 0);
    EXPECT_EQ(values(find(build_metrics(s, 50), "cqmgr_destination_suspended"))
                  .at("transport=smtp,destination=held.example"),
              1);
    EXPECT_EQ(values(find(fs, "cqmgr_transport_suspended_destinations")).at("transport=smtp"), 1);
    EXPECT_EQ(values(find(fs, "cqmgr_transport_throttled_destinations")).at("transport=smtp"), 2);
    EXPECT_EQ(values(find(fs, "cqmgr_transport_suspended")).at("transport=smtp"), 0);
    EXPECT_EQ(values(find(fs, "cqmgr_control_settings")),
              (std::map<std::string, double>{{"kind=suspension", 1}, {"kind=throttle", 3}}));
}

TEST(Metrics, ADestinationNamedOtherIsAlwaysSummed) {
    MetricsSnapshot s;
    s.destinations = {dest("local", "other", 1, 1, 0), dest("local", "bob", 1, 0, 0)};
    auto busy = values(find(build_metrics(s, 50), "cqmgr_destination_busy"));
    EXPECT_EQ(busy, (std::map<std::string, double>{{"transport=local,destination=bob", 0},
                                                   {"transport=local,destination=other", 1}}));
}

TEST(Metrics, HistogramsAreCumulative) {
    auto fs = build_metrics(sample_snapshot(), 50);
    const auto& delay = find(fs, "cqmgr_queue_delay_seconds");
    ASSERT_EQ(delay.type, MetricType::Histogram);
    ASSERT_EQ(delay.metric.size(), 2u); // local, smtp
    const auto& smtp = delay.metric[1].histogram;
    EXPECT_EQ(labels(delay.metric[1]), "transport=smtp");
    EXPECT_EQ(smtp.sample_count, 2u); // only the done requests
    EXPECT_DOUBLE_EQ(smtp.sample_sum, 701.5);
    ASSERT_EQ(smtp.bucket.size(), queue_delay_bounds.size() + 1);
    for (size_t i = 0; i < queue_delay_bounds.size(); ++i) {
        double b = queue_delay_bounds[i];
        EXPECT_EQ(smtp.bucket[i].upper_bound, b);
        EXPECT_EQ(smtp.bucket[i].cumulative_count, (b >= 1.5) + (b >= 700)) << b;
    }
    EXPECT_EQ(smtp.bucket.back().cumulative_count, 2u);

    const auto& time = find(fs, "cqmgr_delivery_duration_seconds");
    EXPECT_EQ(time.metric[1].histogram.sample_count, 4u); // every smtp request
    EXPECT_DOUBLE_EQ(time.metric[1].histogram.sample_sum, 31.22);
}

TEST(Metrics, ScrapeText) {
    std::string text = prometheus::TextSerializer().Serialize(build_metrics(sample_snapshot(), 50));
    for (const char* line :
         {"# TYPE cqmgr_deliveries_total counter\n",
          "cqmgr_deliveries_total{transport=\"smtp\",status=\"done\",dsn_class=\"none\"} 2\n",
          "cqmgr_messages_ended_total{end=\"removed\"} 4\n", "cqmgr_active_messages 3\n",
          "cqmgr_destination_todo{transport=\"smtp\",destination=\"a.example\"} 4\n",
          "# TYPE cqmgr_queue_delay_seconds histogram\n",
          "cqmgr_queue_delay_seconds_count{transport=\"smtp\"} 2\n",
          "cqmgr_queue_delay_seconds_bucket{transport=\"smtp\",le=\"+Inf\"} 2\n"})
        EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
}

namespace {
// A driver for a scheduler that is only looked at.
struct IdleDriver : core::Driver {
    void refill(core::Message&, int) override {}
    void message_done(core::Message&) override {}
    void defer_recipients(core::Message&, const std::vector<core::Recipient>&,
                          const core::Dsn&) override {}
};
} // namespace

TEST(Metrics, SnapshotOfTheScheduler) {
    core::Message m;
    m.id = "A1";
    IdleDriver driver;
    core::Scheduler sched(
        {}, [](const std::string&) { return core::TransportConfig{}; }, driver);
    sched.set_time(1000);
    sched.message_add(m);
    core::Transport& smtp = sched.transport("smtp");
    core::Queue& a = sched.queue_for(smtp, "a.example", "a.example");
    core::Queue& b = sched.queue_for(smtp, "b.example", "b.example");
    auto rcpt = [](const char* address) { return core::Recipient(0, address, "", "", 0); };
    for (const char* r : {"x@a.example", "y@a.example", "z@a.example"})
        sched.assign(m, a, rcpt(r));
    sched.assign(m, b, rcpt("x@b.example"));
    sched.batch_done(m, false, 0);
    // One entry goes to an agent.
    core::Transport* t = sched.select_transport();
    ASSERT_EQ(t, &smtp);
    sched.connection_ready(*t);
    ASSERT_NE(sched.select_entry(*t), nullptr);

    Counters c;
    c.messages_activated = 1;
    MetricsSnapshot s = take_metrics_snapshot(sched, c, 1);
    EXPECT_EQ(s.counters.messages_activated, 1u);
    EXPECT_EQ(s.active_messages, 1);
    EXPECT_EQ(s.active_recipients, 4);
    ASSERT_EQ(s.transports.size(), 1u);
    EXPECT_EQ(s.transports[0].name, "smtp");
    EXPECT_EQ(s.transports[0].destinations, 2);
    EXPECT_EQ(s.transports[0].busy, 1);
    EXPECT_EQ(s.transports[0].todo, 1);
    EXPECT_EQ(s.transports[0].window, 2 * core::TransportConfig{}.init_dest_concurrency);
    EXPECT_FALSE(s.transports[0].dead);
    ASSERT_EQ(s.destinations.size(), 2u);
    int busy = 0, todo = 0;
    for (const auto& d : s.destinations) {
        EXPECT_EQ(d.transport, "smtp");
        busy += d.busy;
        todo += d.todo;
    }
    EXPECT_EQ(busy, 1);
    EXPECT_EQ(todo, 1);
    EXPECT_EQ(s.suspensions, 0);

    // The administrator's settings, as the control socket's commands make
    // them.
    ASSERT_TRUE(
        sched.set_limit({"smtp", ""}, core::LimitChange::hold(core::AdminHold{0, "all", 0})));
    ASSERT_TRUE(
        sched.set_limit({"", "a.example"}, core::LimitChange::hold(core::AdminHold{0, "one", 0})));
    ASSERT_TRUE(
        sched.set_limit({"smtp", "b.example"}, core::LimitChange::cap(core::AdminCap{1, 0, 0})));
    ASSERT_TRUE(
        sched.set_limit({"", "nowhere.example"}, core::LimitChange::cap(core::AdminCap{1, 0, 0})));
    s = take_metrics_snapshot(sched, c, 1);
    EXPECT_EQ(s.transports[0].suspended, 1);
    EXPECT_EQ(s.transports[0].suspended_destinations, 1);
    EXPECT_EQ(s.transports[0].throttled_destinations, 1);
    EXPECT_EQ(s.suspensions, 2);
    EXPECT_EQ(s.throttles, 2);
    for (const auto& d : s.destinations) {
        EXPECT_EQ(d.suspended, d.name == "a.example") << d.name;
        EXPECT_EQ(d.throttled, d.name == "b.example") << d.name;
        EXPECT_FALSE(d.share_lowered) << d.name;
    }

    // A share the isolation lowered.
    ASSERT_TRUE(sched.set_limit({"smtp", "a.example"}, core::LimitChange::share(1)));
    s = take_metrics_snapshot(sched, c, 1);
    for (const auto& d : s.destinations)
        EXPECT_EQ(d.share_lowered, d.name == "a.example") << d.name;
    auto lowered = values(find(build_metrics(s, 50), "cqmgr_destination_share_lowered"));
    EXPECT_EQ(lowered.at("transport=smtp,destination=a.example"), 1);
    EXPECT_EQ(lowered.at("transport=smtp,destination=b.example"), 0);
}

// The features' series: main.cf's limits, the learned limits and the reply
// rules' actions kept in the scheduler, and Redis and the state store only
// while they are configured.
TEST(Metrics, FeatureSeries) {
    IdleDriver driver;
    core::Scheduler sched(
        {}, [](const std::string&) { return core::TransportConfig{}; }, driver);
    sched.transport("smtp");
    sched.transport("local");
    ASSERT_TRUE(sched.set_limit({"smtp", "a.example"},
                                core::LimitChange::learned(core::LearnedLimit{2, 0})));
    ASSERT_TRUE(sched.set_limit({"smtp", ""}, core::LimitChange::rule(core::RuleLimit{true})));
    ASSERT_TRUE(sched.set_limit({"relay", "b.example"},
                                core::LimitChange::rule(core::RuleLimit{false, 1, 5})));
    cqmgr::conf::QmgrParams params;
    params.qmgr_message_active_limit = 20000;
    params.qmgr_message_recipient_limit = 20000;
    params.maximal_queue_lifetime = 432000;
    params.bounce_queue_lifetime = 86400;

    MetricsSnapshot s;
    s.features = feature_snapshot(sched, params);
    auto fs = build_metrics(s, 50);
    EXPECT_EQ(values(find(fs, "cqmgr_active_messages_limit")).at(""), 20000);
    EXPECT_EQ(values(find(fs, "cqmgr_maximal_queue_lifetime_seconds")).at(""), 432000);
    EXPECT_EQ(values(find(fs, "cqmgr_bounce_queue_lifetime_seconds")).at(""), 86400);
    auto learned = values(find(fs, "cqmgr_learned_limits"));
    EXPECT_EQ(learned, (std::map<std::string, double>{
                           {"transport=local", 0}, {"transport=relay", 0}, {"transport=smtp", 1}}));
    auto actions = values(find(fs, "cqmgr_reply_actions_in_force"));
    EXPECT_EQ(actions.at("transport=smtp,action=suspend"), 1);
    EXPECT_EQ(actions.at("transport=smtp,action=throttle"), 0);
    EXPECT_EQ(actions.at("transport=relay,action=throttle"), 1);
    EXPECT_EQ(actions.at("transport=relay,action=rate"), 1);
    EXPECT_EQ(actions.at("transport=local,action=suspend"), 0);
    for (const char* absent : {"cqmgr_redis_up", "cqmgr_cluster_leases", "cqmgr_state_store_up",
                               "cqmgr_state_store_commits_total"})
        EXPECT_THROW(find(fs, absent), std::runtime_error) << absent;

    s.features.shared = {{"destination", true, 3}, {"provider", false, 0}};
    s.features.state_up = false;
    s.features.state_commits = 7;
    fs = build_metrics(s, 50);
    EXPECT_EQ(values(find(fs, "cqmgr_redis_up")),
              (std::map<std::string, double>{{"limits=destination", 1}, {"limits=provider", 0}}));
    EXPECT_EQ(values(find(fs, "cqmgr_cluster_leases")).at("limits=destination"), 3);
    EXPECT_EQ(values(find(fs, "cqmgr_state_store_up")).at(""), 0);
    EXPECT_EQ(values(find(fs, "cqmgr_state_store_commits_total")).at(""), 7);
}

// The reply rules' actions on sender groups' mail (which the scheduler
// keeps apart from its bounds by name) count with the others: one per
// group and destination, by what it does, on a transport already counted
// or a new one, in the transports' order.
TEST(Metrics, SenderRulesCountWithTheOthers) {
    FeatureSnapshot s;
    s.transports = {{"relay", 0, {0, 0, 0}}, {"smtp", 1, {1, 0, 0}}};
    count_sender_rule(s, "smtp", core::RuleLimit{true});
    count_sender_rule(s, "smtp", core::RuleLimit{false, 2, 30}); // a backoff: cap and pace
    count_sender_rule(s, "local", core::RuleLimit{false, 0, 60});
    MetricsSnapshot m;
    m.features = s;
    auto actions = values(find(build_metrics(m, 50), "cqmgr_reply_actions_in_force"));
    EXPECT_EQ(actions, (std::map<std::string, double>{{"transport=local,action=suspend", 0},
                                                      {"transport=local,action=throttle", 0},
                                                      {"transport=local,action=rate", 1},
                                                      {"transport=relay,action=suspend", 0},
                                                      {"transport=relay,action=throttle", 0},
                                                      {"transport=relay,action=rate", 0},
                                                      {"transport=smtp,action=suspend", 2},
                                                      {"transport=smtp,action=throttle", 1},
                                                      {"transport=smtp,action=rate", 1}}));
}

// Whatever the list's capacity when the features' families are added, each
// gets its samples (a family's reference does not survive the next family).
TEST(Metrics, FeatureSeriesWhateverTheCapacity) {
    FeatureSnapshot s;
    s.transports = {{"smtp", 1, {0, 1, 0}}};
    s.shared = {{"destination", true, 3}, {"provider", false, 1}};
    s.state_up = true;
    for (size_t capacity = 0; capacity < 12; ++capacity) {
        std::vector<MetricFamily> out;
        out.reserve(capacity);
        feature_families(out, s);
        EXPECT_EQ(values(find(out, "cqmgr_redis_up")).size(), 2u) << capacity;
        EXPECT_EQ(values(find(out, "cqmgr_cluster_leases")).size(), 2u) << capacity;
        EXPECT_EQ(values(find(out, "cqmgr_learned_limits")).size(), 1u) << capacity;
        EXPECT_EQ(values(find(out, "cqmgr_reply_actions_in_force")).size(), 3u) << capacity;
    }
}

// The queue gauges: a census per scanned queue and the active queue's
// messages; a queue not known yet has no series, nor an oldest age whose
// birth times are unknown; an empty queue's oldest is 0.
TEST(Metrics, QueueGauges) {
    MetricsSnapshot s;
    s.queues[1] = active_gauge(4, protocol::TimeVal{1000, 500000}, protocol::TimeVal{1010, 0});
    s.queues[2] = census_gauge({10000, 400}, 1000);
    auto fs = build_metrics(s, 50);
    EXPECT_EQ(values(find(fs, "cqmgr_queue_messages")),
              (std::map<std::string, double>{{"queue=active", 4}, {"queue=deferred", 10000}}));
    EXPECT_EQ(values(find(fs, "cqmgr_queue_oldest_age_seconds")),
              (std::map<std::string, double>{{"queue=active", 9.5}, {"queue=deferred", 600}}));
    s.queues[0] = census_gauge({0, 0}, 1000); // empty
    s.queues[2] = census_gauge({3, 0}, 1000); // births unknown
    s.queues[1] = active_gauge(0, std::nullopt, protocol::TimeVal{1010, 0});
    fs = build_metrics(s, 50);
    EXPECT_EQ(values(find(fs, "cqmgr_queue_messages")),
              (std::map<std::string, double>{
                  {"queue=incoming", 0}, {"queue=active", 0}, {"queue=deferred", 3}}));
    EXPECT_EQ(values(find(fs, "cqmgr_queue_oldest_age_seconds")),
              (std::map<std::string, double>{{"queue=incoming", 0}, {"queue=active", 0}}));
}

// The loop's lag is a histogram without labels.
TEST(Metrics, EventLoopLag) {
    MetricsSnapshot s;
    s.loop_lag.observe(loop_lag_bounds, 0.003);
    s.loop_lag.observe(loop_lag_bounds, 2);
    const auto fs = build_metrics(s, 50);
    const auto& f = find(fs, "cqmgr_event_loop_lag_seconds");
    ASSERT_EQ(f.metric.size(), 1u);
    EXPECT_EQ(f.metric[0].histogram.sample_count, 2u);
    EXPECT_DOUBLE_EQ(f.metric[0].histogram.sample_sum, 2.003);
    EXPECT_TRUE(f.metric[0].label.empty());
}
