// The reply rules that act, between the delivery path and a real scheduler
// core (the core tests' scripted driver), on a fake clock: a rule acts at
// its threshold, on the words of the hop status or of the records the
// delivery added to the defer log, with one log line naming the rule; the
// action is the queue's rule bound (nothing deferred); it ends at its
// time, after N deliveries, or by resume; a bad result is warned about
// with the table and the key and does nothing; the actions in force are
// kept in the state store and taken up after a restart.
// (The daemon runs these from the delivery path: scenario reply-action-suspend.)
#include "admin_state.hpp"
#include "control_commands.hpp"
#include "cqmgr/control/request.hpp"
#include "daemon_fixture.hpp"
#include "fake_driver.hpp"
#include "provider_scopes.hpp"
#include "providers.hpp"
#include "reply_actions.hpp"
#include "rule_state.hpp"
#include "temp_dir.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;

namespace {

const core::AdminTarget smtp_d{"smtp", "d.example"};

const char* const rules_text = R"(
/\[TSS04\]/       suspend destination after 3/10m for 1h
/\b4\.7\.28\b/    throttle 2 destination until 2 delivered
/unusual volume/  warn transport after 2/1h
/bad rule/        suspend galaxy for 1h
/sender words/    suspend sender-destination for 1h
/provider words/  suspend provider for 1h
/slow down/       rate 2/1m destination for 1h
/provider busy/   suspend provider after 3/10m for 1h
/sender rate/     throttle 1 sender-provider until 2 delivered
)";

const char* const tss04 =
    "host mx[192.0.2.1] said: 421 4.7.0 [TSS04] Messages from 192.0.2.9 temporarily deferred due "
    "to unexpected volume";

struct Actions : ::testing::Test {
    TempDir dir{"cqmgr-reply-actions"};
    cqmgr::qmgr::testing::FakeClock clock;
    cqmgr::qmgr::testing::LogCapture logs{dir.file("postlog")};
    asio::io_context io;
    core::test::FakeDriver drv;
    std::unique_ptr<core::Scheduler> sched;
    std::unique_ptr<CoreRequests> requests;
    std::vector<std::unique_ptr<core::Message>> msgs;
    std::string log_path = dir.file("defer");
    std::unique_ptr<ReplyActions> actions;

    // Recipients per entry.
    virtual int recipient_limit() const { return 1; }

    void SetUp() override {
        core::TransportConfig tc;
        tc.dest_recipient_limit = recipient_limit();
        // A hop status is the destination's failure: stock's feedback
        // would declare it dead after a few, which is not what is tested.
        tc.fail_cohort_limit = 0;
        sched = std::make_unique<core::Scheduler>(
            core::SchedulerConfig{}, [tc](const std::string&) { return tc; }, drv);
        drv.sched = sched.get();
        sched->set_time(clock.t);
        requests = std::make_unique<CoreRequests>(io, *sched);
        actions = make_actions();
    }
    std::unique_ptr<ReplyActions> make_actions(ReplyActions::Scopes scopes = {},
                                               const char* rules = rules_text,
                                               BackoffProfiles profiles = {}) {
        return std::make_unique<ReplyActions>(
            RegexTable::parse("pcre", "/etc/postfix/reply_actions", rules,
                              [](const std::string&) {}),
            *requests, clock, [this](const std::string&) { return log_path; }, scopes,
            std::move(profiles));
    }
    // Message `id` of sender group `group` (0: none) with `n` recipients
    // (offsets 100, 200, ...) for d.example; its first `k` entries,
    // selected.
    std::vector<core::Entry*> select(const std::string& id, int n, int k,
                                     core::SenderGroup group = 0) {
        auto m = std::make_unique<core::Message>();
        m->id = id;
        m->sender_group = group;
        sched->message_add(*m);
        core::Transport& t = sched->transport("smtp");
        for (int i = 0; i < n; ++i) {
            auto r = core::test::rcpt("r" + std::to_string(i) + "@d.example", 100 * (i + 1));
            sched->assign(*m, sched->queue_for(t, "d.example", "d.example"), r);
        }
        sched->batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
        std::vector<core::Entry*> out;
        for (int i = 0; i < k; ++i)
            out.push_back(sched->select_entry(t));
        return out;
    }
    // Entry `e`'s delivery ended with `r`: the rules hear of it, then the
    // scheduler.
    void end(core::Entry* e, const core::DeliveryResult& r, int64_t mark = 0) {
        actions->delivered(*e, r, mark);
        sched->delivery_done(e, r);
        sched->check_invariants();
    }
    static core::DeliveryResult deferred(const std::string& status, const std::string& text) {
        return core::DeliveryResult{core::DeliveryResult::Kind::replied, 1, {status, text}};
    }
    void defer_record(int64_t offset, const std::string& status, const std::string& reason) {
        std::ofstream(log_path, std::ios::app)
            << "\nrecipient=x@d.example\noffset=" << offset << "\nstatus=" << status
            << "\naction=delayed\nreason=" << reason << "\n\n";
    }
};

// Entries of up to 3 recipients.
struct ActionsBatch : Actions {
    int recipient_limit() const override { return 3; }
};

} // namespace

TEST_F(Actions, ASuspensionAtItsThresholdHoldsTheDestination) {
    auto busy = select("M", 6, 4);
    core::Queue& q = *busy[0]->queue;
    end(busy[0], deferred("4.7.0", tss04));
    clock.t += 60;
    end(busy[1], deferred("4.7.0", tss04));
    EXPECT_FALSE(q.limits.rule); // two of three
    EXPECT_TRUE(actions->actives().empty());
    clock.t += 60;
    end(busy[2], deferred("4.7.0", tss04));
    ASSERT_TRUE(q.limits.rule);
    EXPECT_TRUE(q.limits.rule->hold);
    EXPECT_EQ(q.limits.rule->until, clock.t + 3600);
    EXPECT_FALSE(q.may_start());
    const ReplyActions::Active* a = actions->active(smtp_d);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->rule, "pcre:/etc/postfix/reply_actions, line 2");
    EXPECT_EQ(a->reason, std::string("4.7.0 ") + tss04);
    EXPECT_TRUE(logs.has_part("cqmgr: smtp:d.example: reply rule pcre:/etc/postfix/reply_actions, "
                              "line 2 (\"suspend destination after 3/10m for 1h\"): suspend for "
                              "3600s after 3 in 600s, from \"4.7.0 host mx[192.0.2.1] said: 421"))
        << logs.text();
    // Nothing was deferred by it; the mail waits.
    EXPECT_TRUE(drv.deferred.empty());
    EXPECT_EQ(sched->select_entry(sched->transport("smtp")), nullptr);
    // The one in flight ends; the same rule again changes nothing.
    int64_t until = q.limits.rule->until;
    clock.t += 60;
    end(busy[3], deferred("4.7.0", tss04));
    EXPECT_EQ(q.limits.rule->until, until);
    // At its time the scheduler ends it, and the rules hear of it.
    sched->set_time(until);
    EXPECT_EQ(drv.expired, (std::vector<std::string>{"rule smtp:d.example"}));
    actions->expired(smtp_d);
    EXPECT_TRUE(actions->actives().empty());
    EXPECT_FALSE(q.limits.rule);
    EXPECT_TRUE(logs.has_part("suspend ended at its time")) << logs.text();
}

TEST_F(ActionsBatch, WordsInTheDeferLogCountOncePerDelivery) {
    // Entries of three recipients deferred one by one (no hop text); a
    // fourth entry waits, so that the queue outlives the three deliveries.
    auto busy = select("M", 12, 3);
    core::Queue& q = *busy[0]->queue;
    defer_record(999, "4.7.0", tss04); // another delivery's recipient
    defer_record(999, "4.7.0", tss04);
    defer_record(999, "4.7.0", tss04);
    EXPECT_FALSE(q.limits.rule);
    for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 3; ++k)
            defer_record(100 * (3 * i + k + 1), "4.7.0", tss04);
        end(busy[i], core::DeliveryResult{core::DeliveryResult::Kind::replied, 1, {}});
    }
    EXPECT_FALSE(q.limits.rule); // six records, two deliveries
    int64_t mark = static_cast<int64_t>(std::ifstream(log_path, std::ios::ate).tellg());
    defer_record(700, "4.7.0", tss04);
    end(busy[2], core::DeliveryResult{core::DeliveryResult::Kind::replied, 1, {}}, mark);
    ASSERT_TRUE(q.limits.rule);
    EXPECT_TRUE(q.limits.rule->hold);
}

TEST_F(Actions, UntilNDeliveredEndsAThrottle) {
    auto busy = select("M", 6, 3);
    core::Queue& q = *busy[0]->queue;
    end(busy[0], deferred("4.7.28", "host mx said: 421 4.7.28 unusual rate"));
    ASSERT_TRUE(q.limits.rule);
    EXPECT_EQ(q.limits.rule->concurrency, 2);
    EXPECT_EQ(q.limits.rule->until, 0);
    EXPECT_EQ(actions->active(smtp_d)->deliveries, 2);
    end(busy[1], core::DeliveryResult{});
    EXPECT_TRUE(q.limits.rule);
    end(busy[2], core::DeliveryResult{});
    EXPECT_FALSE(q.limits.rule);
    EXPECT_TRUE(actions->actives().empty());
    EXPECT_TRUE(logs.has_part("throttle ended after 2 deliveries")) << logs.text();
}

TEST_F(Actions, ARateIsAPauseAfterEachDelivery) {
    auto busy = select("M", 4, 2);
    core::Queue& q = *busy[0]->queue;
    end(busy[0], deferred("4.3.0", "host mx said: 451 please slow down"));
    ASSERT_TRUE(q.limits.rule);
    EXPECT_FALSE(q.limits.rule->hold);
    EXPECT_EQ(q.limits.rule->pause, 30); // 2 a minute
    EXPECT_EQ(q.limits.pause(), 30);
    EXPECT_EQ(q.limits.window(5), 1); // one at a time
    // The next delivery's end pauses the queue, as a learned pause does.
    end(busy[1], core::DeliveryResult{});
    EXPECT_TRUE(q.suspended);
}

// A backoff puts its profile's limits (cqmgr_backoff_profiles) on its
// scope as one rule bound, and ends after N deliveries; a rule naming a
// profile no table has is a bad rule, warned about when it matches.
TEST_F(Actions, ABackoffIsItsProfilesLimits) {
    actions = make_actions({}, R"(
/slow words/     backoff slow destination for 1h until 2 delivered
/missing words/  backoff missing destination for 1h
/capped words/   backoff capped destination for 10m
)",
                           BackoffProfiles::open({"inline:{ { slow = concurrency=2 rate=30/1m }, "
                                                  "capped=concurrency=3 }"},
                                                 {}));
    EXPECT_EQ(actions->bad_rules(), 1u);
    auto busy = select("M", 6, 4);
    core::Queue& q = *busy[0]->queue;
    end(busy[0], deferred("4.7.0", "host mx said: 421 4.7.0 missing words"));
    EXPECT_FALSE(q.limits.rule);
    EXPECT_TRUE(logs.has_part("warning: cqmgr_reply_actions: pcre:/etc/postfix/reply_actions, "
                              "line 3: bad result \"backoff missing destination for 1h\" for "
                              "\"4.7.0 host mx said: 421 4.7.0 missing words\": no profile "
                              "\"missing\" in cqmgr_backoff_profiles; the rule is ignored"))
        << logs.text();
    end(busy[1], deferred("4.7.0", "host mx said: 421 4.7.0 slow words"));
    ASSERT_TRUE(q.limits.rule);
    EXPECT_EQ(*q.limits.rule,
              (core::RuleLimit{.concurrency = 2, .pause = 2, .until = clock.t + 3600}));
    EXPECT_EQ(q.limits.pause(), 2);
    EXPECT_TRUE(logs.has_part("cqmgr: smtp:d.example: reply rule pcre:/etc/postfix/reply_actions, "
                              "line 2 (\"backoff slow destination for 1h until 2 delivered\"): "
                              "backoff slow (concurrency 2, a pause of 2s after each delivery) "
                              "for 3600s until 2 delivered, from \"4.7.0 host mx said: 421 4.7.0 "
                              "slow words\""))
        << logs.text();
    // Nothing deferred by it; two deliveries end it.
    EXPECT_TRUE(drv.deferred.empty());
    end(busy[2], core::DeliveryResult{});
    EXPECT_TRUE(q.limits.rule);
    end(busy[3], core::DeliveryResult{});
    EXPECT_FALSE(q.limits.rule);
    EXPECT_TRUE(logs.has_part("(\"backoff slow destination for 1h until 2 delivered\"): backoff "
                              "ended after 2 deliveries"))
        << logs.text();
    // A profile of a concurrency alone: a cap, no pause (once the last
    // delivery's pause is over).
    clock.t += 10;
    sched->set_time(clock.t);
    auto more = select("N", 2, 1);
    ASSERT_TRUE(more[0]);
    end(more[0], deferred("4.7.0", "host mx said: 421 4.7.0 capped words"));
    ASSERT_TRUE(q.limits.rule);
    EXPECT_EQ(*q.limits.rule, (core::RuleLimit{.concurrency = 3, .until = clock.t + 600}));
    EXPECT_EQ(q.limits.window(10), 3);
    EXPECT_TRUE(logs.has_part("backoff capped (concurrency 3) for 600s")) << logs.text();
}

// After a restart a kept backoff takes its profile's limits again; one
// whose profile is gone is dropped with a warning that says so.
TEST_F(Actions, AKeptBackoffTakesItsProfileAgain) {
    actions =
        make_actions({}, rules_text, BackoffProfiles::open({"inline:{ slow=concurrency=2 }"}, {}));
    ReplyActions::Active kept;
    kept.target = smtp_d;
    kept.rule = "pcre:/etc/postfix/reply_actions, line 9";
    kept.action = "backoff slow destination for 1h";
    kept.since = clock.t;
    kept.until = clock.t + 3600;
    ReplyActions::Active gone = kept;
    gone.target = {"smtp", "e.example"};
    gone.action = "backoff gone destination for 1h";
    actions->restore({kept, gone});
    EXPECT_EQ(sched->limits().rules().at(smtp_d),
              (core::RuleLimit{.concurrency = 2, .until = clock.t + 3600}));
    EXPECT_FALSE(sched->limits().rules().count({"smtp", "e.example"}));
    EXPECT_TRUE(logs.has_part("backoff restored, 3600s left")) << logs.text();
    EXPECT_TRUE(logs.has_part("smtp:e.example: kept reply rule action \"backoff gone destination "
                              "for 1h\" is not one (no profile \"gone\" in "
                              "cqmgr_backoff_profiles); dropped"))
        << logs.text();
}

TEST_F(Actions, AWarningActsOnNothing) {
    auto busy = select("M", 4, 2);
    end(busy[0], deferred("4.3.0", "host mx said: 451 unusual volume"));
    EXPECT_FALSE(logs.has_part("reply rule")) << logs.text();
    end(busy[1], deferred("4.3.0", "host mx said: 451 unusual volume"));
    EXPECT_TRUE(logs.has_part("warning: cqmgr: smtp: reply rule pcre:/etc/postfix/reply_actions, "
                              "line 4 (\"warn transport after 2/1h\") after 2 in 3600s: \"4.3.0 "
                              "host mx said: 451 unusual volume\""))
        << logs.text();
    EXPECT_TRUE(actions->actives().empty());
    EXPECT_TRUE(sched->limits().rules().empty());
}

TEST_F(Actions, ABadResultIsWarnedAboutAndIgnored) {
    EXPECT_EQ(actions->bad_rules(), 1u);
    auto busy = select("M", 4, 2);
    end(busy[0], deferred("4.3.0", "host mx said: 451 bad rule"));
    EXPECT_TRUE(
        logs.has_part("warning: cqmgr_reply_actions: pcre:/etc/postfix/reply_actions, "
                      "line 5: bad result \"suspend galaxy for 1h\" for \"4.3.0 host mx "
                      "said: 451 bad rule\": unknown scope \"galaxy\"; the rule is ignored"))
        << logs.text();
    EXPECT_TRUE(sched->limits().rules().empty());
}

TEST_F(Actions, ScopesWithoutMembersDoNothing) {
    // No provider or sender group is known (the defaults).
    auto busy = select("M", 4, 2);
    end(busy[0], deferred("4.3.0", "host mx said: 451 sender words"));
    end(busy[1], deferred("4.3.0", "host mx said: 451 provider words"));
    EXPECT_TRUE(sched->limits().rules().empty());
    // A provider with members: each member destination is held.
    actions = make_actions(
        ReplyActions::Scopes{.provider = [](const core::Queue&) { return std::string("yahoo"); },
                             .provider_queues =
                                 [](const std::string&, const std::string&) {
                                     return std::vector<std::string>{"d.example", "e.example"};
                                 },
                             .sender_group = {},
                             .sender_number = {}});
    auto more = select("N", 2, 1);
    end(more[0], deferred("4.3.0", "host mx said: 451 provider words"));
    EXPECT_TRUE(sched->limits().rules().count(smtp_d));
    EXPECT_TRUE(sched->limits().rules().count({"smtp", "e.example"}));
    EXPECT_TRUE(logs.has_part("reply rule pcre:/etc/postfix/reply_actions, line 7 (\"suspend "
                              "provider for 1h\"): suspend for 3600s of smtp:provider yahoo"))
        << logs.text();
}

// The daemon's provider scope (the providers' membership, as the queue
// manager passes it): a rule that suspends the provider, at its threshold
// of 421s from one member, holds every member on the transport and no
// other destination.
TEST_F(Actions, AProviderSuspensionFromOneMemberHoldsEveryMember) {
    Providers providers(
        io,
        ProviderMaps::open({"inline:{ d.example=yahoo, e.example=yahoo, f.example=yahoo }"}, {}),
        *sched);
    actions = make_actions(with_provider_scopes({}, providers));
    auto busy = select("M", 6, 3);
    // Mail waits for the other members and for g.example, of no provider.
    auto m = std::make_unique<core::Message>();
    m->id = "N";
    sched->message_add(*m);
    core::Transport& t = sched->transport("smtp");
    const std::vector<std::string> others{"e.example", "f.example", "g.example"};
    for (size_t i = 0; i < others.size(); ++i)
        sched->assign(*m, sched->queue_for(t, others[i], others[i]),
                      core::test::rcpt("r@" + others[i], 100 * static_cast<int64_t>(i + 1)));
    sched->batch_done(*m, false, 0);
    msgs.push_back(std::move(m));
    for (const char* name : {"d.example", "e.example", "f.example", "g.example"}) {
        std::optional<int> gate;
        providers.queue_born(*sched->find_queue("smtp", name), gate);
    }
    const std::string reply = "host mx[192.0.2.1] said: 421 4.7.0 provider busy, try later";
    end(busy[0], deferred("4.7.0", reply));
    clock.t += 60;
    end(busy[1], deferred("4.7.0", reply));
    EXPECT_TRUE(sched->limits().rules().empty()); // two of three
    clock.t += 60;
    end(busy[2], deferred("4.7.0", reply));
    for (const char* member : {"d.example", "e.example", "f.example"}) {
        auto rule = sched->limits().rules().find({"smtp", member});
        ASSERT_NE(rule, sched->limits().rules().end()) << member;
        EXPECT_TRUE(rule->second.hold) << member;
        EXPECT_EQ(rule->second.until, clock.t + 3600) << member;
        EXPECT_FALSE(sched->find_queue("smtp", member)->may_start()) << member;
    }
    EXPECT_FALSE(sched->limits().rules().count({"smtp", "g.example"}));
    EXPECT_EQ(sched->select_entry(t)->queue->name, "g.example");
    EXPECT_TRUE(logs.has_part("(\"suspend provider after 3/10m for 1h\"): suspend for 3600s"))
        << logs.text();
    EXPECT_TRUE(logs.has_part("of smtp:provider yahoo")) << logs.text();
    // One line for the provider, not one per member: a provider may have
    // thousands, and a burst of lines fills a log socket.
    auto count = [this](const std::string& part) {
        int n = 0;
        for (const std::string& l : logs.lines())
            n += l.find(part) != std::string::npos;
        return n;
    };
    EXPECT_EQ(count("reply rule"), 1) << logs.text();
    EXPECT_TRUE(logs.has_part("cqmgr: smtp:provider yahoo: reply rule")) << logs.text();
    EXPECT_TRUE(logs.has_part("of smtp:provider yahoo, 3 destinations, from")) << logs.text();
    // At its time each member's ends; the provider's end is logged once.
    for (const char* member : {"d.example", "e.example", "f.example"})
        actions->expired({"smtp", member});
    EXPECT_TRUE(actions->actives().empty());
    EXPECT_EQ(count("ended at its time"), 1) << logs.text();
    EXPECT_TRUE(logs.has_part("cqmgr: smtp:provider yahoo: reply rule")) << logs.text();
}

TEST_F(Actions, ResumeEndsWhatItCovers) {
    auto busy = select("M", 4, 1);
    end(busy[0], deferred("4.7.28", "host mx said: 421 4.7.28 unusual rate"));
    ASSERT_TRUE(sched->limits().rules().count(smtp_d));
    EXPECT_TRUE(actions->resume({"smtp", "other.example"}).empty());
    EXPECT_EQ(actions->resume({"", "d.example"}), (std::vector<core::AdminTarget>{smtp_d}));
    EXPECT_TRUE(sched->limits().rules().empty());
    EXPECT_TRUE(logs.has_part("smtp:d.example: reply rule pcre:/etc/postfix/reply_actions, line 3 "
                              "(\"throttle 2 destination until 2 delivered\"): throttle ended by "
                              "resume"))
        << logs.text();
}

TEST_F(Actions, TheControlSocketsResumeEndsThem) {
    AdminState nothing_kept;
    ControlCommands commands(*sched, nothing_kept, clock, {}, [](const std::string&) {});
    commands.use_rule_actions(actions.get());
    auto busy = select("M", 4, 1);
    end(busy[0], deferred("4.7.28", "host mx said: 421 4.7.28 unusual rate"));
    ASSERT_TRUE(sched->limits().rules().count(smtp_d));
    auto request = control::parse_request("resume smtp:d.example");
    ASSERT_TRUE(request.ok()) << request.error;
    std::string reply = control::reply_line(commands.execute(*request.request, 0));
    EXPECT_NE(reply.find(R"({"target":"smtp:d.example","rule":null})"), std::string::npos) << reply;
    EXPECT_TRUE(sched->limits().rules().empty());
    EXPECT_TRUE(actions->actives().empty());
}

TEST_F(Actions, KeptAcrossARestart) {
    TempDir store_dir{"cqmgr-reply-actions-store"};
    auto open = [&] {
        state::Store::Options o;
        o.no_sync = true;
        return state::Store::open(
            store_dir.file("state.lmdb"), [](const std::string&) {}, o);
    };
    int64_t until = 0;
    {
        AdminState kept(open());
        // An administrator's suspension is kept next to it.
        ASSERT_TRUE(kept.save({{core::AdminKind::hold, {"relay", ""}, {0, "maintenance", 0}, {}}}));
        keep_rule_actions(*actions, &kept);
        auto busy = select("M", 4, 3);
        for (auto* e : busy) {
            end(e, deferred("4.7.0", tss04));
            clock.t += 1;
        }
        ASSERT_TRUE(actions->active(smtp_d));
        until = actions->active(smtp_d)->until;
        keep_rule_actions(*actions, nullptr);
    }
    // A new process: a new scheduler, the same store.
    SetUp();
    clock.t += 100;
    AdminState again(open());
    EXPECT_EQ(again.load().size(), 1u);
    restore_rule_actions(*actions, again);
    const ReplyActions::Active* a = actions->active(smtp_d);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->until, until);
    EXPECT_EQ(a->rule, "pcre:/etc/postfix/reply_actions, line 2");
    EXPECT_EQ(sched->limits().rules().at(smtp_d), (core::RuleLimit{.hold = true, .until = until}));
    EXPECT_TRUE(logs.has_part("suspend restored, " + std::to_string(until - clock.t) + "s left"))
        << logs.text();
    // One that ended meanwhile is dropped.
    clock.t = until;
    SetUp();
    restore_rule_actions(*actions, again);
    EXPECT_TRUE(actions->actives().empty());
    EXPECT_TRUE(logs.has_part("suspend ended while cqmgr was not running")) << logs.text();
}

namespace {

// The sender scopes, as the queue manager gives them: group 1 is
// "campaign.example" (numbered `number` by name after a restart, 0: no
// group then), and d.example and e.example are yahoo's.
struct SenderActions : Actions {
    core::SenderGroup number = 1;
    void SetUp() override {
        Actions::SetUp();
        actions = make_actions(ReplyActions::Scopes{
            .provider = [](const core::Queue&) { return std::string("yahoo"); },
            .provider_queues =
                [](const std::string&, const std::string&) {
                    return std::vector<std::string>{"d.example", "e.example"};
                },
            .sender_group =
                [](const core::Entry& e) {
                    return std::string(e.message->sender_group == 1 ? "campaign.example" : "");
                },
            .sender_number =
                [this](const std::string& name) {
                    return name == "campaign.example" ? number : core::SenderGroup{0};
                }});
    }
    const ReplyActions::Active* campaign(const std::string& queue = "d.example") const {
        return actions->sender_active({"smtp", queue}, "campaign.example");
    }
    core::Transport& smtp() { return sched->transport("smtp"); }
};

} // namespace

// A sender-destination rule holds the group's mail on the destination,
// while another sender's mail there goes on, and ends at its time.
TEST_F(SenderActions, ASenderScopeHoldsOnlyThatGroupsMail) {
    auto busy = select("M", 4, 1, 1);
    select("N", 2, 0);
    end(busy[0], deferred("4.3.0", "host mx said: 451 sender words"));
    ASSERT_TRUE(campaign());
    EXPECT_EQ(campaign()->group_number, 1);
    const int64_t until = campaign()->until;
    EXPECT_EQ(until, clock.t + 3600);
    EXPECT_TRUE(sched->limits().rules().empty()); // not the destination's bound
    EXPECT_TRUE(logs.has_part(
        "cqmgr: sender campaign.example smtp:d.example: reply rule "
        "pcre:/etc/postfix/reply_actions, line 6 (\"suspend sender-destination for 1h\"): "
        "suspend for 3600s of sender campaign.example smtp:d.example, 1 destination, from "
        "\"4.3.0 host mx said: 451 sender words\""))
        << logs.text();
    EXPECT_FALSE(logs.has_part("nothing done")) << logs.text();
    for (int i = 0; i < 2; ++i) {
        core::Entry* e = sched->select_entry(smtp());
        ASSERT_TRUE(e);
        EXPECT_EQ(e->message->id, "N");
        end(e, core::DeliveryResult{});
    }
    EXPECT_EQ(sched->select_entry(smtp()), nullptr);
    // At its time the scheduler ends it, and the rules hear of it.
    sched->set_time(until);
    EXPECT_EQ(drv.expired, (std::vector<std::string>{"sender 1 smtp:d.example"}));
    actions->sender_expired(smtp_d, 1);
    EXPECT_TRUE(actions->sender_actives().empty());
    EXPECT_TRUE(logs.has_part("cqmgr: sender campaign.example smtp:d.example: reply rule "
                              "pcre:/etc/postfix/reply_actions, line 6 (\"suspend "
                              "sender-destination for 1h\"): suspend ended at its time"))
        << logs.text();
    core::Entry* e = sched->select_entry(smtp());
    ASSERT_TRUE(e);
    EXPECT_EQ(e->message->id, "M");
}

// A sender-provider rule bounds the group's mail on each member, and
// `until N delivered` counts the group's deliveries on each.
TEST_F(SenderActions, ASenderProviderThrottleEndsAfterNDeliveries) {
    auto busy = select("M", 6, 2, 1);
    end(busy[0], deferred("4.7.0", "host mx said: 421 sender rate"));
    ASSERT_TRUE(campaign());
    ASSERT_TRUE(campaign("e.example"));
    EXPECT_EQ(campaign()->deliveries, 2);
    EXPECT_TRUE(logs.has_part("of sender campaign.example smtp:provider yahoo, 2 destinations"))
        << logs.text();
    // One of the group's deliveries is in flight: at the throttle's 1.
    EXPECT_EQ(sched->select_entry(smtp()), nullptr);
    end(busy[1], core::DeliveryResult{});
    core::Entry* e = sched->select_entry(smtp());
    ASSERT_TRUE(e);
    EXPECT_EQ(sched->select_entry(smtp()), nullptr);
    end(e, core::DeliveryResult{});
    EXPECT_FALSE(campaign());
    EXPECT_TRUE(campaign("e.example")); // counted on each member
    EXPECT_TRUE(logs.has_part("throttle ended after 2 deliveries")) << logs.text();
    EXPECT_TRUE(sched->select_entry(smtp()));
    EXPECT_TRUE(sched->select_entry(smtp()));
}

// `cqmgrctl resume TARGET sender GROUP` ends that group's actions only;
// a plain resume ends the destination's and every group's.
TEST_F(SenderActions, ResumeWithASenderGroupEndsOnlyItsActions) {
    AdminState nothing_kept;
    ControlCommands commands(*sched, nothing_kept, clock, {}, [](const std::string&) {});
    commands.use_rule_actions(actions.get());
    auto execute = [&](const char* line) {
        auto request = control::parse_request(line);
        EXPECT_TRUE(request.ok()) << request.error;
        return control::reply_line(commands.execute(*request.request, 0));
    };
    auto busy = select("M", 6, 3, 1);
    end(busy[0], deferred("4.3.0", "host mx said: 451 sender words"));
    end(busy[1], deferred("4.7.28", "host mx said: 421 4.7.28 unusual rate"));
    ASSERT_TRUE(campaign());
    ASSERT_TRUE(actions->active(smtp_d));
    std::string reply = execute("resume smtp:d.example sender Campaign.Example");
    EXPECT_NE(reply.find(R"({"target":"smtp:d.example","sender":"campaign.example","rule":null})"),
              std::string::npos)
        << reply;
    EXPECT_EQ(reply.find("\"suspended\""), std::string::npos) << reply;
    EXPECT_FALSE(campaign());
    EXPECT_TRUE(actions->active(smtp_d));
    EXPECT_TRUE(logs.has_part("cqmgr: sender campaign.example smtp:d.example: reply rule "
                              "pcre:/etc/postfix/reply_actions, line 6 (\"suspend "
                              "sender-destination for 1h\"): suspend ended by resume"))
        << logs.text();
    // The group's mail goes again.
    core::Entry* e = sched->select_entry(smtp());
    ASSERT_TRUE(e);
    end(e, deferred("4.3.0", "host mx said: 451 sender words"));
    ASSERT_TRUE(campaign());
    reply = execute("resume smtp:d.example");
    EXPECT_NE(reply.find(R"({"target":"smtp:d.example","rule":null})"), std::string::npos) << reply;
    EXPECT_NE(reply.find(R"("sender":"campaign.example","rule":null})"), std::string::npos)
        << reply;
    EXPECT_TRUE(actions->actives().empty());
    EXPECT_TRUE(actions->sender_actives().empty());
}

// An action on a group's mail is kept with its group, and taken up after
// a restart by the group's name; one whose group is no group now is
// dropped.
TEST_F(SenderActions, KeptAcrossARestartWithItsGroup) {
    TempDir store_dir{"cqmgr-sender-actions-store"};
    auto open = [&] {
        state::Store::Options o;
        o.no_sync = true;
        return state::Store::open(
            store_dir.file("state.lmdb"), [](const std::string&) {}, o);
    };
    {
        AdminState kept(open());
        keep_rule_actions(*actions, &kept);
        auto busy = select("M", 4, 1, 1);
        end(busy[0], deferred("4.3.0", "host mx said: 451 sender words"));
        ASSERT_TRUE(campaign());
        keep_rule_actions(*actions, nullptr);
    }
    SetUp();
    clock.t += 100;
    AdminState again(open());
    number = 3; // the group's number in the new process
    restore_rule_actions(*actions, again);
    ASSERT_TRUE(campaign());
    EXPECT_EQ(campaign()->group_number, 3);
    EXPECT_EQ(campaign()->rule, "pcre:/etc/postfix/reply_actions, line 6");
    EXPECT_TRUE(logs.has_part("cqmgr: sender campaign.example smtp:d.example: reply rule "
                              "pcre:/etc/postfix/reply_actions, line 6 (\"suspend "
                              "sender-destination for 1h\"): suspend restored, 3500s left"))
        << logs.text();
    // Its group's mail (number 3 now) waits; other mail goes.
    select("M", 2, 0, 3);
    select("N", 1, 0);
    core::Entry* e = sched->select_entry(smtp());
    ASSERT_TRUE(e);
    EXPECT_EQ(e->message->id, "N");
    EXPECT_EQ(sched->select_entry(smtp()), nullptr);
    // cqmgr_sender_limits makes no group of it any more: dropped.
    SetUp();
    number = 0;
    restore_rule_actions(*actions, again);
    EXPECT_TRUE(actions->sender_actives().empty());
    EXPECT_TRUE(logs.has_part("dropped, as cqmgr_sender_limits makes no group of campaign.example"))
        << logs.text();
}
