// The adaptive limits' provider scope (cqmgr_adaptive_limit_scope =
// provider) between a real scheduler core, the providers' membership and
// the providers' gates, wired as the queue manager wires them
// (learned_to_provider_gates): a 421 to one member teaches a concurrency
// limit that holds across every member of the provider on that transport,
// computed from the provider's deliveries in flight; a member born later
// takes it up at birth; a queue in no provider learns on its own and gets
// no gate; the forgotten limit leaves no gate behind.  After every start
// the invariant is checked: a member's delivery starts only within the
// learned limit once it is known.
#include "adaptive.hpp"
#include "cluster_limits.hpp"
#include "provider_gates.hpp"
#include "provider_scope.hpp"
#include "providers.hpp"
#include "smtp_mail.hpp"
#include "test_params.hpp"

#include <gtest/gtest.h>

namespace cqmgr::qmgr {
namespace {

struct TestClock final : WallClock {
    protocol::TimeVal t{1'000'000, 0};
    int64_t now() const override { return t.sec; }
    protocol::TimeVal precise() const override { return t; }
};

const std::string main_cf = "cqmgr_adaptive_limit_transports = smtp\n"
                            "cqmgr_provider_maps = inline:{ d1.example=big, d2.example=big, "
                            "d3.example=big }\n";

const core::DeliveryResult too_many{
    core::DeliveryResult::Kind::replied,
    -1,
    {"4.7.0", "host mx[192.0.2.1] refused to talk to me: 421 4.7.0 Error: too many connections "
              "from 192.0.2.9"}};

// One sending host with adaptive limits learning per provider (or, with
// `scope` destination, per destination).
struct Host : core::Driver {
    explicit Host(asio::io_context& io, const std::string& scope_name)
        : params(testing::params(main_cf + "cqmgr_adaptive_limit_scope = " + scope_name + "\n")),
          sched(
              core::SchedulerConfig{},
              [](const std::string&) {
                  core::TransportConfig tc;
                  tc.dest_recipient_limit = 1;
                  tc.init_dest_concurrency = 5;
                  tc.dest_concurrency_limit = 0;
                  return tc;
              },
              *this),
          tables(ClusterLimits::open_tables(params)),
          providers(io, std::move(tables.provider_maps), sched),
          adaptive(params, std::nullopt, sched, [](const std::string&) { return "/nonexistent"; }),
          scope(providers, [this](const core::Transport& t) { return adaptive.covers(t); }),
          gates(io, params, ClusterLimits::Tables{}, sched, learning_scoping(&providers)) {
        if (params.cqmgr_adaptive_limit_scope == "provider")
            adaptive.use_provider_scope(&scope, [this](const std::string& transport,
                                                       const std::string& provider,
                                                       const core::LearnedLimit& limit) {
                learned_to_provider_gates(gates, providers, sched, transport, provider, limit);
            });
        sched.set_time(clock.now());
        // In the queue manager's order (Features::add_observers).
        for (DeliveryObserver* o :
             std::initializer_list<DeliveryObserver*>{&adaptive, &providers, &scope, &gates})
            observers.add(o);
    }
    static ClusterLimits::Scoping learning_scoping(const Providers* p) {
        ClusterLimits::Scoping s = ClusterLimits::provider_scoping(p);
        s.learned = true;
        return s;
    }

    void mail(int n, const std::string& queue) { testing::smtp_mail(sched, msgs, n, queue); }
    // Starts what the gates allow, each through the adaptive limits as the
    // delivery path starts it.
    void pump() {
        gates.refresh();
        while (core::Transport* t = sched.select_transport()) {
            sched.connection_ready(*t);
            core::Entry* e = sched.select_entry(*t);
            if (!e) break;
            auto ev = std::make_unique<DeliveryEvent>();
            ev->clock = &clock;
            ev->entry = e;
            ev->busy_at_start = e->queue->busy_count();
            observers.delivery_started(*ev);
            busy.push_back(std::move(ev));
            check(*e->queue);
        }
    }
    // The oldest delivery in flight to `queue` ends with `r`.
    void end(const std::string& queue, core::DeliveryResult r = {}) {
        auto it = std::find_if(busy.begin(), busy.end(),
                               [&](const auto& ev) { return ev->entry->queue->name == queue; });
        ASSERT_NE(it, busy.end()) << "nothing in flight to " << queue;
        std::unique_ptr<DeliveryEvent> ev = std::move(*it);
        busy.erase(it);
        ev->result = r;
        observers.delivery_ended(*ev);
        sched.delivery_done(ev->entry, ev->result);
        ev->entry = nullptr;
        observers.delivery_reported(*ev);
    }
    // The provider's deliveries in flight when the oldest one to `queue`
    // started (itself included).
    int group_busy_of_oldest(const std::string& queue) const {
        for (const auto& ev : busy)
            if (ev->entry->queue->name == queue) return ev->group_busy_at_start;
        return -1;
    }
    int members_in_flight() const {
        int n = 0;
        for (const auto& ev : busy)
            if (providers.provider_of("smtp", ev->entry->queue->name)) n++;
        return n;
    }
    // A member's delivery started: within the limit, once it is known
    // (those started before it may be above it).
    void check(const core::Queue& q) {
        if (limit > 0 && providers.provider_of("smtp", q.name)) {
            EXPECT_LE(members_in_flight(), limit);
        }
    }
    core::Queue& queue(const std::string& name) { return *sched.find_queue("smtp", name); }

    // Mails 10 messages each to d1 and d2 and starts them; two of d1's
    // deliveries end well and the third with a 421.  The provider's
    // deliveries in flight when that one started.
    int teach() {
        mail(10, "d1.example");
        mail(10, "d2.example");
        pump();
        end("d1.example");
        end("d1.example");
        int at = group_busy_of_oldest("d1.example");
        end("d1.example", too_many);
        return at;
    }

    // core::Driver: the queues' events go to the observers.
    void refill(core::Message&, int) override {}
    void message_done(core::Message& m) override { sched.message_free(m); }
    void defer_recipients(core::Message&, const std::vector<core::Recipient>&,
                          const core::Dsn&) override {}
    void wakeup() override {}
    std::optional<int> queue_gate(const core::Queue& q) override { return observers.queue_born(q); }
    void queue_freed(const core::Queue& q) override { observers.queue_freed(q); }

    TestClock clock;
    conf::QmgrParams params;
    core::Scheduler sched;
    ClusterLimits::Tables tables;
    Providers providers;
    AdaptiveLimits adaptive;
    ProviderScope scope;
    ClusterLimits gates;
    DeliveryObservers observers;
    std::vector<std::unique_ptr<core::Message>> msgs;
    std::vector<std::unique_ptr<DeliveryEvent>> busy;
    int limit = 0; // the invariant checked, once learned
};

const core::AdminTarget big = ProviderScope::target_of("smtp", "big");

TEST(ProviderLearning, A421ToOneMemberHoldsEveryMemberOfTheProvider) {
    asio::io_context io;
    Host h(io, "provider");
    h.mail(10, "other.example");
    int at = h.teach();
    // Each member's delivery started with the provider's count (the last
    // one with all 10 of d1 and d2); 7 are still in flight.
    int top = 0;
    for (const auto& ev : h.busy)
        top = std::max(top, ev->group_busy_at_start);
    EXPECT_EQ(top, 10);
    ASSERT_TRUE(h.scope.group(h.queue("d1.example")));
    EXPECT_EQ(h.scope.group(h.queue("d1.example"))->busy, 7);
    EXPECT_FALSE(h.scope.group(h.queue("other.example")));
    // The third delivery to d1 went with `at` of the provider's in flight
    // (d1's and d2's counted together): the receiver allows fewer.
    EXPECT_EQ(h.adaptive.group_limit(big), (core::LearnedLimit{at - 1, 0}));
    // Learned for the provider, not for the queues: the members' gates
    // hold it across all of them (7 still in flight: nothing may start).
    EXPECT_FALSE(h.queue("d2.example").limits.learned.any());
    EXPECT_EQ(h.queue("d1.example").limits.gate, 0);
    EXPECT_EQ(h.queue("d2.example").limits.gate, 0);
    const AdaptiveLimits::Cause* c = h.adaptive.cause(h.queue("d2.example"));
    ASSERT_TRUE(c);
    EXPECT_EQ(c->cls, ReplyClass::connection_limit);
    // The queue in no provider is not held.
    EXPECT_FALSE(h.queue("other.example").limits.gate);
    EXPECT_EQ(h.adaptive.cause(h.queue("other.example")), nullptr);

    // A member born now takes the limit up at birth.
    h.mail(5, "d3.example");
    EXPECT_EQ(h.queue("d3.example").limits.gate, 0);

    // From here on the members never have more than that in flight.
    h.limit = at - 1;
    for (int i = 0; i < 200 && !h.busy.empty(); i++) {
        h.end(h.busy.front()->entry->queue->name);
        io.restart();
        io.run_for(std::chrono::milliseconds(15)); // the gates' linger
        h.pump();
    }
    EXPECT_TRUE(h.busy.empty());
    h.sched.check_invariants();
}

TEST(ProviderLearning, AForgottenLimitLeavesNoGate) {
    asio::io_context io;
    Host h(io, "provider");
    h.mail(2, "d1.example");
    h.pump();
    // No strike yet: nothing learned, no gate (no slow start for a
    // provider): the queue goes at its window.
    EXPECT_FALSE(h.queue("d1.example").limits.gate);
    EXPECT_EQ(h.busy.size(), 2u);
    int at = h.teach();
    EXPECT_EQ(h.adaptive.group_limit(big), (core::LearnedLimit{at - 1, 0}));
    EXPECT_TRUE(h.queue("d1.example").limits.gate);
    // An hour without a strike.
    h.clock.t.sec += 3600;
    h.adaptive.sweep(h.clock.now_ms());
    EXPECT_FALSE(h.adaptive.group_limit(big).any());
    EXPECT_FALSE(h.queue("d1.example").limits.gate);
    EXPECT_FALSE(h.queue("d2.example").limits.gate);
}

TEST(ProviderLearning, AKeptLimitIsTakenUpOnlyWithTheProviderScope) {
    asio::io_context io;
    Host h(io, "provider");
    // From the state store at start: held by the members' gates at birth.
    int64_t now = h.clock.now();
    EXPECT_TRUE(h.adaptive.restore(big, {3, 0}, now - 60, h.clock.now_ms()));
    EXPECT_EQ(h.adaptive.group_limit(big), (core::LearnedLimit{3, 0}));
    h.mail(10, "d1.example");
    EXPECT_EQ(h.queue("d1.example").limits.gate, 3);
    // With the destination scope a provider's limit is not taken up (nor
    // set on a queue of that name).
    Host d(io, "destination");
    EXPECT_FALSE(d.adaptive.restore(big, {3, 0}, now - 60, d.clock.now_ms()));
    EXPECT_TRUE(d.sched.limits().learned().empty());
}

TEST(ProviderLearning, WithTheDestinationScopeEachQueueLearnsAlone) {
    asio::io_context io;
    Host h(io, "destination");
    h.teach();
    // d1's own count at the strike: its third delivery.
    EXPECT_EQ(h.queue("d1.example").limits.learned.concurrency, 2);
    EXPECT_FALSE(h.adaptive.group_limit(big).any());
    EXPECT_FALSE(h.queue("d2.example").limits.gate);
    EXPECT_FALSE(h.queue("d2.example").limits.learned.any());
    EXPECT_EQ(h.adaptive.cause(h.queue("d2.example")), nullptr);
}

} // namespace
} // namespace cqmgr::qmgr
