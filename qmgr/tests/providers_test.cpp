// Providers and their limits: cqmgr_provider_maps makes destination queues
// members of a provider (by name at birth, or later by an MX answer from a
// fake MxSource), and the providers' ClusterLimits holds
// cqmgr_provider_concurrency_limits across all of them, on this host's
// own count and through a fake of the shared state.  After every step the
// invariant is checked: the deliveries in flight to the provider's queues
// never exceed its limit.
#include "cluster_limits.hpp"
#include "control_queries.hpp"
#include "explain_features.hpp"
#include "fake_shared_state.hpp"
#include "metrics.hpp"
#include "providers.hpp"
#include "smtp_mail.hpp"
#include "temp_dir.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>
#include <map>

namespace cqmgr::qmgr {
namespace {

using namespace std::chrono_literals;
using testing::FakeShared;
using testing::FakeStore;

// An MX source whose answers the test hands out.
struct FakeMx : MxSource {
    std::map<std::string, Answer> asked;
    void lookup(const std::string&, const std::string&, const std::string& domain,
                Answer answer) override {
        asked[domain] = std::move(answer);
    }
    // Answers known at once (the resolver's cache), by domain.
    std::map<std::string, std::string> known;
    std::optional<std::string> cached(const std::string&, const std::string&,
                                      const std::string& domain) override {
        auto it = known.find(domain);
        if (it == known.end()) return std::nullopt;
        return it->second;
    }
    void answer(const std::string& domain, const std::string& provider) {
        auto a = std::move(asked.at(domain));
        asked.erase(domain);
        a(provider);
    }
};

// One sending host: a scheduler, its providers, the providers' limits and
// (with `dest_limits`) the destination limits, combined as the queue
// manager combines them.
struct Host : core::Driver {
    explicit Host(asio::io_context& io, const std::string& main_cf, int window = 5)
        : window(window), params(testing::params(main_cf)),
          sched(
              core::SchedulerConfig{},
              [this](const std::string&) {
                  core::TransportConfig tc;
                  tc.dest_recipient_limit = 1;
                  tc.init_dest_concurrency = this->window;
                  tc.dest_concurrency_limit = 0;
                  return tc;
              },
              *this),
          tables(ClusterLimits::open_tables(params)),
          providers(io, std::move(tables.provider_maps), sched),
          provider_limits(io, params,
                          ClusterLimits::Tables::of(std::move(tables.provider_rates),
                                                    std::move(tables.provider_concurrency)),
                          sched, ClusterLimits::provider_scoping(&providers)),
          dest_limits(io, params, std::move(tables), sched) {
        providers.set_listener([this](const core::Queue& q) { provider_limits.rescope(q); });
        dest_limits.combine_with(&provider_limits);
        provider_limits.combine_with(&dest_limits);
        sched.set_time(1000);
    }

    // `n` one-recipient entries of a new message for `queue`.
    void mail(int n, const std::string& queue) { testing::smtp_mail(sched, msgs, n, queue); }
    // As Delivery::pump: the limits ask for what is wanted, then agents
    // take what the gates allow, one start at a time.
    void pump() {
        dest_limits.refresh();
        provider_limits.refresh();
        while (core::Transport* t = sched.select_transport()) {
            sched.connection_ready(*t);
            core::Entry* e = sched.select_entry(*t);
            if (!e) break;
            dest_limits.started(*e->queue);
            provider_limits.started(*e->queue);
            busy.push_back(e);
            check();
        }
    }
    // The oldest delivery in flight to `queue` ends.
    void end(const std::string& queue) {
        auto it = std::find_if(busy.begin(), busy.end(),
                               [&](core::Entry* e) { return e->queue->name == queue; });
        ASSERT_NE(it, busy.end()) << "nothing in flight to " << queue;
        core::Entry* e = *it;
        busy.erase(it);
        std::string t = e->queue->transport->name, q = e->queue->name;
        sched.delivery_done(e, core::DeliveryResult{});
        dest_limits.finished(t, q);
        provider_limits.finished(t, q);
    }
    int in_flight(const std::string& queue) const {
        return static_cast<int>(std::count_if(
            busy.begin(), busy.end(), [&](core::Entry* e) { return e->queue->name == queue; }));
    }
    // In flight to the members of `provider`.
    int provider_in_flight(const std::string& provider) const {
        int n = 0;
        for (core::Entry* e : busy)
            if (const std::string* p = providers.provider_of("smtp", e->queue->name);
                p && *p == provider)
                n++;
        return n;
    }
    void check() {
        for (auto& [provider, limit] : limits) {
            int n = provider_in_flight(provider);
            peak[provider] = std::max(peak[provider], n);
            EXPECT_LE(n, limit) << "in flight to " << provider << "'s queues";
        }
    }

    // core::Driver
    void refill(core::Message&, int) override {}
    void message_done(core::Message& m) override { sched.message_free(m); }
    void defer_recipients(core::Message&, const std::vector<core::Recipient>&,
                          const core::Dsn&) override {}
    void wakeup() override {}
    std::optional<int> queue_gate(const core::Queue& q) override {
        std::optional<int> gate;
        providers.queue_born(q, gate);
        dest_limits.queue_born(q, gate);
        provider_limits.queue_born(q, gate);
        return gate;
    }
    void queue_freed(const core::Queue& q) override {
        providers.queue_freed(q);
        dest_limits.queue_freed(q);
        provider_limits.queue_freed(q);
    }

    int window;
    conf::QmgrParams params;
    core::Scheduler sched;
    ClusterLimits::Tables tables;
    Providers providers;
    ClusterLimits provider_limits;
    ClusterLimits dest_limits;
    std::vector<std::unique_ptr<core::Message>> msgs;
    std::vector<core::Entry*> busy;
    std::map<std::string, int> limits; // the invariant checked: provider -> limit
    std::map<std::string, int> peak;
};

const std::string five =
    "cqmgr_provider_maps = inline:{ d1.example=big, d2.example=big, d3.example=big, "
    "d4.example=big, d5.example=big }\n";

class ProvidersTest : public ::testing::Test {
  protected:
    // Runs the timers due (the 10 ms linger) until `done()` holds, pumping.
    bool wait_until(Host& h, const std::function<bool()>& done) {
        auto end = std::chrono::steady_clock::now() + 10s;
        while (!done() && std::chrono::steady_clock::now() < end) {
            // (Out of work, the context stops: restarted for the next timers.)
            io.restart();
            io.run_for(2ms);
            h.pump();
        }
        return done();
    }
    // Ends deliveries one at a time (the oldest of any queue) until none is
    // left, pumping after each.
    void drain(Host& h) {
        for (int i = 0; i < 1000 && !h.busy.empty(); i++) {
            h.end(h.busy.front()->queue->name);
            h.pump();
            if (h.busy.empty()) wait_until(h, [&] { return !h.busy.empty() || !pending(h); });
        }
    }
    // Whether mail waits anywhere.
    bool pending(Host& h) {
        for (const char* d : {"d1.example", "d2.example", "d3.example", "d4.example", "d5.example",
                              "other.example", "x.example"})
            if (core::Queue* q = h.sched.find_queue("smtp", d); q && q->selectable_count() > 0)
                return true;
        return false;
    }

    asio::io_context io;
};

TEST(ProviderMapsTest, ADomainListedByNameBelongsToItsProvider) {
    auto m = ProviderMaps::open(
        {"inline:{ a.example=google, .google.com=google, { b.example = bad name } }"}, {});
    EXPECT_EQ(m.provider_of_domain("a.example"), "google");
    EXPECT_EQ(m.provider_of_domain("A.Example"), "google"); // keys fold case
    EXPECT_EQ(m.provider_of_domain("a.example:2525"), "google");
    EXPECT_EQ(m.provider_of_domain("[a.example]"), "google");
    EXPECT_EQ(m.provider_of_domain("x.example"), std::nullopt);
    EXPECT_EQ(m.find(".google.com"), "google");                 // an MX host suffix
    EXPECT_EQ(m.provider_of_domain("b.example"), std::nullopt); // not a provider's name
    EXPECT_TRUE(ProviderMaps::valid_name("microsoft"));
    EXPECT_FALSE(ProviderMaps::valid_name(""));
    EXPECT_FALSE(ProviderMaps::valid_name("a b"));
    EXPECT_FALSE(ProviderMaps::valid_name(std::string(max_provider_name + 1, 'a')));
}

TEST(ProviderMapsTest, RegularExpressionTablesAndTextFilesAreReadInOrder) {
    TempDir dir;
    std::string pcre = dir.write("providers.pcre", "/\\.google\\.com$/ google\n"
                                                   "/^mx\\.other\\.example$/ {bad name}\n");
    std::string text = dir.write("providers", "# hosted\nexample.org   microsoft\n");
    std::vector<std::string> warnings;
    auto m = ProviderMaps::open({"pcre:" + pcre, "texthash:" + text},
                                [&](const std::string& w) { warnings.push_back(w); });
    EXPECT_EQ(m.find("mx1.l.google.com"), "google");
    EXPECT_EQ(m.provider_of_domain("example.org"), "microsoft");
    EXPECT_EQ(m.find("mx.other.example"), std::nullopt);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("bad provider name"), std::string::npos) << warnings[0];
    EXPECT_THROW(ProviderMaps::open({"texthash:" + dir.str() + "/none"}, {}), conf::ConfigError);
}

TEST(ProviderMapsTest, OnlyNamesThatAreDomainsAreLookedUpInDns) {
    EXPECT_EQ(Providers::mx_domain("gmail.com"), "gmail.com");
    EXPECT_EQ(Providers::mx_domain("gmail.com:25"), "gmail.com");
    EXPECT_EQ(Providers::mx_domain("[mx.gmail.com]"), std::nullopt);
    EXPECT_EQ(Providers::mx_domain("localhost"), std::nullopt);
}

TEST_F(ProvidersTest, FiveMembersNeverExceedTheProvidersLimit) {
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ big=2 }\n");
    h.limits["big"] = 2;
    for (int d = 1; d <= 5; d++)
        h.mail(4, "d" + std::to_string(d) + ".example");
    h.mail(4, "other.example");
    h.pump();
    EXPECT_EQ(h.provider_in_flight("big"), 2);
    // A destination outside every provider has no gate: its window alone.
    EXPECT_EQ(h.in_flight("other.example"), 4);
    EXPECT_EQ(h.provider_limits.gate_count(), 5u);
    drain(h);
    EXPECT_FALSE(pending(h));
    EXPECT_EQ(h.peak["big"], 2);
}

// The destination limits' own scopes on this host's count (no Redis): a
// key that covers several queues (here the transport's) holds across them
// too, however the agents' starts interleave.
TEST_F(ProvidersTest, EachProviderHasOneNumberForTheScheduler) {
    Host h(io, "cqmgr_provider_maps = inline:{ d1.example=big, d2.example=big, "
               "x.example=other }\n");
    for (const char* d : {"d1.example", "d2.example", "x.example", "other.example"})
        h.mail(1, d);
    auto number = [&](const char* d) {
        return h.providers.number_of(*h.sched.find_queue("smtp", d));
    };
    // The sender limits per provider count d1 and d2 together, x on its
    // own, and other.example (no provider) as a destination.
    EXPECT_NE(number("d1.example"), 0u);
    EXPECT_EQ(number("d1.example"), number("d2.example"));
    EXPECT_NE(number("x.example"), 0u);
    EXPECT_NE(number("x.example"), number("d1.example"));
    EXPECT_EQ(number("other.example"), 0u);
}

TEST_F(ProvidersTest, ATransportsLimitHoldsAcrossItsQueuesWithoutRedis) {
    Host h(io, five + "cqmgr_cluster_concurrency_limits = inline:{ smtp=2 }\n");
    h.limits["big"] = 2; // every queue here is big's
    for (int d = 1; d <= 5; d++)
        h.mail(3, "d" + std::to_string(d) + ".example");
    h.pump();
    EXPECT_EQ(h.provider_in_flight("big"), 2);
    drain(h);
    EXPECT_FALSE(pending(h));
    EXPECT_EQ(h.peak["big"], 2);
}

TEST_F(ProvidersTest, TheTransportsKeyComesFirst) {
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ smtp:big=1, big=3 }\n");
    h.limits["big"] = 1;
    for (int d = 1; d <= 3; d++)
        h.mail(3, "d" + std::to_string(d) + ".example");
    h.pump();
    EXPECT_EQ(h.provider_in_flight("big"), 1);
    auto v = h.provider_limits.view("smtp", "d1.example");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->lease_scope, "provider:smtp:big");
    EXPECT_EQ(v->limit, 1);
    drain(h);
    EXPECT_FALSE(pending(h));
}

TEST_F(ProvidersTest, ADestinationsOwnLimitStillHoldsWithinItsProvider) {
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ big=3 }\n"
                      "cqmgr_cluster_concurrency_limits = inline:{ d1.example=1 }\n");
    h.limits["big"] = 3;
    h.mail(5, "d1.example");
    h.pump();
    EXPECT_EQ(h.in_flight("d1.example"), 1); // its own limit is the smaller
    h.mail(5, "d2.example");
    h.pump();
    EXPECT_EQ(h.in_flight("d2.example"), 2); // the provider's room that is left
    drain(h);
    EXPECT_FALSE(pending(h));
}

TEST_F(ProvidersTest, TheProvidersRateHoldsAcrossItsMembers) {
    // 10 a second with no burst: one start, then the next a tenth of a
    // second later, whichever member it is for.
    Host h(io, five + "cqmgr_provider_rate_limits = inline:{ { big = 10/s,1 } }\n");
    for (int d = 1; d <= 3; d++)
        h.mail(2, "d" + std::to_string(d) + ".example");
    auto started = [&] { return static_cast<int>(h.busy.size()); };
    // (Before the first start: the second is booked an interval after it.)
    auto before = std::chrono::steady_clock::now();
    wait_until(h, [&] { return started() >= 1; });
    EXPECT_EQ(started(), 1);
    ASSERT_TRUE(wait_until(h, [&] { return started() >= 2; }));
    EXPECT_GE(std::chrono::steady_clock::now() - before, 95ms);
    EXPECT_EQ(started(), 2);
    auto v = h.provider_limits.view("smtp", "d2.example");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->rate_scope, "provider:big");
}

TEST_F(ProvidersTest, AnMxAnswerMakesARunningDestinationJoinItsProvider) {
    FakeMx mx;
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ big=2 }\n");
    h.providers.use_mx(&mx);
    h.mail(6, "x.example");
    h.pump();
    // Nothing waits for DNS: on its own, the window's 5 at once.
    ASSERT_TRUE(mx.asked.contains("x.example"));
    EXPECT_EQ(h.in_flight("x.example"), 5);
    EXPECT_EQ(h.providers.provider_of("smtp", "x.example"), nullptr);
    // The answer: a member now, with 5 in flight against a limit of 2.
    mx.answer("x.example", "big");
    ASSERT_NE(h.providers.provider_of("smtp", "x.example"), nullptr);
    h.mail(3, "d1.example");
    h.pump();
    EXPECT_EQ(h.in_flight("d1.example"), 0) << "the provider is full with x.example's deliveries";
    // Nothing new starts until fewer than 2 are in flight across both.
    for (int left = 4; left >= 2; left--) {
        h.end("x.example");
        h.pump();
        EXPECT_EQ(h.provider_in_flight("big"), left);
    }
    h.limits["big"] = 2;
    drain(h);
    EXPECT_FALSE(pending(h));
    EXPECT_TRUE(h.providers.members().empty());
}

TEST_F(ProvidersTest, AnAnswerForAQueueSinceFreedIsNotItsSuccessors) {
    FakeMx mx;
    Host h(io, "cqmgr_provider_maps = inline:{ .mx.example=big }\n"
               "cqmgr_provider_concurrency_limits = inline:{ big=1 }\n");
    h.providers.use_mx(&mx);
    h.mail(1, "x.example");
    h.pump();
    h.end("x.example");
    ASSERT_EQ(h.sched.find_queue("smtp", "x.example"), nullptr);
    // Born again: a new lookup; the old one's answer is ignored.
    auto old = std::move(mx.asked.at("x.example"));
    h.mail(1, "x.example");
    old("big");
    EXPECT_EQ(h.providers.provider_of("smtp", "x.example"), nullptr);
    mx.answer("x.example", "");
    EXPECT_EQ(h.providers.provider_of("smtp", "x.example"), nullptr);
    EXPECT_TRUE(h.providers.members().empty());
}

TEST_F(ProvidersTest, ADestinationWhoseAnswerIsCachedIsAMemberFromBirth) {
    FakeMx mx;
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ big=2 }\n");
    h.providers.use_mx(&mx);
    mx.known["x.example"] = "big";
    mx.known["y.example"] = ""; // known to be of no provider
    h.mail(6, "x.example");
    h.mail(3, "y.example");
    // Nothing asked: the provider's limit holds from the first start.
    EXPECT_TRUE(mx.asked.empty());
    ASSERT_NE(h.providers.provider_of("smtp", "x.example"), nullptr);
    EXPECT_EQ(h.providers.provider_of("smtp", "y.example"), nullptr);
    h.limits["big"] = 2;
    h.pump();
    EXPECT_EQ(h.in_flight("x.example"), 2);
    EXPECT_EQ(h.in_flight("y.example"), 3);
    drain(h);
    EXPECT_FALSE(pending(h));
}

TEST_F(ProvidersTest, MembershipGoesWithTheQueue) {
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ big=2 }\n");
    h.mail(1, "d1.example");
    ASSERT_EQ(h.providers.members().at("big").size(), 1u);
    h.pump();
    h.end("d1.example");
    EXPECT_TRUE(h.providers.members().empty());
    EXPECT_TRUE(wait_until(h, [&] { return h.provider_limits.gate_count() == 0; }));
}

// Through the shared state: two hosts share the provider's limit of 2
// across three member domains, and the store never holds more leases.
TEST_F(ProvidersTest, TwoHostsShareTheProvidersLeases) {
    FakeStore store;
    std::string cf = five + "cqmgr_redis_server = fake\n"
                            "cqmgr_cluster_lease_time = 3s\n"
                            "cqmgr_provider_concurrency_limits = inline:{ big=2 }\n";
    Host a(io, "myhostname = a.example\n" + cf), b(io, "myhostname = b.example\n" + cf);
    std::vector<FakeShared*> shared;
    for (Host* h : {&a, &b}) {
        auto f = std::make_unique<FakeShared>(store);
        shared.push_back(f.get());
        h->provider_limits.use_shared(std::move(f));
        h->provider_limits.start();
        shared.back()->connect();
    }
    // Pumps, then runs the steps and answers that asked for, until a round
    // finds nothing to do.
    auto settle = [&] {
        for (int round = 0; round < 1000; round++) {
            size_t before = a.busy.size() + b.busy.size();
            a.pump();
            b.pump();
            bool more = a.busy.size() + b.busy.size() != before;
            more |= io.poll() > 0;
            for (FakeShared* s : shared) {
                while (s->deliver_notice() || s->process() || s->deliver())
                    more = true;
            }
            EXPECT_LE(a.provider_in_flight("big") + b.provider_in_flight("big"), 2);
            EXPECT_LE(store.peak["provider:big"], 2);
            if (!more) return;
        }
        ADD_FAILURE() << "never settled";
    };
    settle();
    for (int d = 1; d <= 3; d++) {
        a.mail(2, "d" + std::to_string(d) + ".example");
        b.mail(2, "d" + std::to_string(d) + ".example");
    }
    settle();
    EXPECT_EQ(a.provider_in_flight("big") + b.provider_in_flight("big"), 2);
    auto end = std::chrono::steady_clock::now() + 10s;
    int ended = 0;
    while (ended < 12 && std::chrono::steady_clock::now() < end) {
        for (Host* h : {&a, &b})
            if (!h->busy.empty()) {
                h->end(h->busy.front()->queue->name);
                ended++;
            }
        settle();
        io.run_for(12ms); // the linger
        settle();
    }
    EXPECT_EQ(ended, 12);
    EXPECT_EQ(store.peak["provider:big"], 2);
}

struct FixedClock final : WallClock {
    int64_t now() const override { return 1000; }
    protocol::TimeVal precise() const override { return {1000, 0}; }
};

// What the control socket's replies read of host `h`: its providers, their
// limits and its cluster limits, and an empty active queue.
struct ControlOf {
    explicit ControlOf(Host& h)
        : record(h.sched), src{.sched = h.sched,
                               .messages = messages,
                               .arrivals = arrivals,
                               .deliveries = record,
                               .counters = counters,
                               .clock = clock,
                               .feed = [] { return FeedState{}; },
                               .providers = &h.providers,
                               .provider_limits = &h.provider_limits,
                               .cluster = &h.dest_limits,
                               .explain = feature_explain_hooks(&h.providers, {})} {}

    MessageTable messages;
    ArrivalIndex arrivals;
    DeliveryRecord record;
    Counters counters;
    FixedClock clock;
    ControlSources src;
};

TEST_F(ProvidersTest, TheProvidersQueryShowsLimitsAndMembers) {
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ big=2 }\n");
    h.mail(3, "d1.example");
    h.mail(3, "d2.example");
    h.mail(3, "other.example");
    h.pump();
    ControlOf c(h);
    ControlQueries q(c.src, ControlIdentity{});
    control::Json j = q.providers();
    ASSERT_EQ(j["providers"].size(), 1u) << j.dump();
    const auto& p = j["providers"][0];
    EXPECT_EQ(p["provider"], "big");
    EXPECT_EQ(p["in_flight"], 2);
    EXPECT_EQ(p["limits"].dump(), R"([{"scope":"provider:big","concurrency":2,)"
                                  R"("in_flight_here":2,"leases_held":0}])");
    ASSERT_EQ(p["members"].size(), 2u);
    EXPECT_EQ(p["members"][0]["queue"], "d1.example");
    EXPECT_EQ(p["members"][1]["queue"], "d2.example");
    drain(h);
}

// cqmgrctl explain of a provider lists its members, and on each the
// provider's limit binds: its share of the provider's 2 deliveries at
// once, with the count in the scope.  A destination limit of the cluster
// on a member shows its own value, not the providers' narrower one.
TEST_F(ProvidersTest, ExplainShowsTheProvidersLimitBinding) {
    Host h(io, five + "cqmgr_provider_concurrency_limits = inline:{ big=2 }\n"
                      "cqmgr_cluster_concurrency_limits = inline:{ d2.example=4 }\n");
    h.mail(3, "d1.example");
    h.mail(3, "d2.example");
    h.mail(3, "other.example");
    h.pump();
    ASSERT_EQ(h.provider_in_flight("big"), 2);
    ControlOf c(h);
    auto explain = [&](const std::string& what) {
        control::Parsed p = control::parse_request("explain " + what);
        EXPECT_TRUE(p.ok());
        return nlohmann::json::parse(control::reply_line(explain_reply(c.src, *p.request->target)));
    };
    auto sources = [](const nlohmann::json& q, bool binding) {
        std::vector<std::string> out;
        for (const auto& l : q["limits"])
            if (!binding || l["binds"] == true) out.push_back(l["source"]);
        return out;
    };
    auto j = explain("big");
    EXPECT_EQ(j["provider"], "big");
    ASSERT_EQ(j["queues"].size(), 2u) << j.dump();
    int in_flight = 0;
    for (const auto& q : j["queues"]) {
        EXPECT_EQ(sources(q, true), std::vector<std::string>{"provider"}) << q.dump();
        // The scope is full: each may have what it has in flight.
        EXPECT_EQ(q["effective"]["concurrency"], q["waiting"]["in_flight"]) << q.dump();
        in_flight += q["waiting"]["in_flight"].get<int>();
        if (q["waiting"]["in_flight"] == 0) {
            EXPECT_EQ(q["next_retry"]["what"], "when the provider limit has room again (0 at once "
                                               "allowed now, none in flight here)");
        }
        for (const auto& l : q["limits"])
            if (l["source"] == "provider") {
                EXPECT_TRUE(l["detail"].get<std::string>().starts_with(
                    "cqmgr_provider_concurrency_limits big = 2 across the queues of provider big "
                    "(scope provider:big); in flight or closing on this host: 2 in the scope"))
                    << l.dump();
            }
    }
    EXPECT_EQ(in_flight, 2);
    // d2.example's own cluster limit, 4, is shown as such.
    auto d2 = explain("d2.example")["queues"][0];
    for (const auto& l : d2["limits"])
        if (l["source"] == "cluster") {
            EXPECT_EQ(l["value"], 4) << l.dump();
        }
    EXPECT_EQ(sources(d2, false)[0], "cluster");
    // Outside every provider: no provider line.
    auto other = explain("other.example")["queues"][0];
    EXPECT_EQ(sources(other, true), std::vector<std::string>{"main.cf"}) << other.dump();
    EXPECT_TRUE(explain("small")["provider"].is_null());
    drain(h);
}

TEST_F(ProvidersTest, MetricsShowTheBusiestProvidersAndSumTheOthers) {
    Host h(io, "cqmgr_provider_maps = inline:{ d1.example=big, d2.example=mid, d3.example=small, "
               "d4.example=small }\n");
    h.mail(3, "d1.example");
    h.mail(2, "d2.example");
    h.mail(1, "d3.example");
    h.mail(1, "d4.example");
    MetricsSnapshot s = take_metrics_snapshot(h.sched, Counters{}, 0, &h.providers, 2);
    ASSERT_EQ(s.providers.size(), 3u);
    EXPECT_EQ(s.providers[0].name, "big");
    EXPECT_EQ(s.providers[0].todo, 3);
    EXPECT_EQ(s.providers[1].name, "mid");
    EXPECT_EQ(s.providers[2].name, "other");
    EXPECT_EQ(s.providers[2].members, 2);
    EXPECT_EQ(s.providers[2].todo, 2);
    bool found = false;
    for (const auto& f : build_metrics(s, 10))
        if (f.name == "cqmgr_provider_members") {
            found = true;
            EXPECT_EQ(f.metric.size(), 3u);
        }
    EXPECT_TRUE(found);
    // No providers, no series.
    MetricsSnapshot none = take_metrics_snapshot(h.sched, Counters{}, 0);
    EXPECT_TRUE(none.providers.empty());
    for (const auto& f : build_metrics(none, 10))
        EXPECT_FALSE(f.name.starts_with("cqmgr_provider_mx_")) << f.name;
}

// The MX lookups' figures: a fixed set of series, one per outcome.
TEST(ProviderMetricsTest, MxLookupsHaveAFixedSetOfSeries) {
    MetricsSnapshot s;
    s.mx = MxResolverStats{};
    s.mx->queries = 7;
    s.mx->outcomes[static_cast<size_t>(MxOutcome::timeout)] = 3;
    s.mx->in_flight = 2;
    std::map<std::string, const prometheus::MetricFamily*> by_name;
    auto families = build_metrics(s, 10);
    for (const auto& f : families)
        by_name[f.name] = &f;
    ASSERT_TRUE(by_name.contains("cqmgr_provider_mx_queries_total"));
    EXPECT_EQ(by_name["cqmgr_provider_mx_queries_total"]->metric.at(0).counter.value, 7);
    ASSERT_TRUE(by_name.contains("cqmgr_provider_mx_results_total"));
    const auto& results = by_name["cqmgr_provider_mx_results_total"]->metric;
    ASSERT_EQ(results.size(), 6u);
    EXPECT_EQ(results[static_cast<size_t>(MxOutcome::timeout)].label.at(0).value, "timeout");
    EXPECT_EQ(results[static_cast<size_t>(MxOutcome::timeout)].counter.value, 3);
    EXPECT_EQ(by_name["cqmgr_provider_mx_in_flight"]->metric.at(0).gauge.value, 2);
}

} // namespace
} // namespace cqmgr::qmgr
