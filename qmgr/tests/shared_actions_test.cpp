// The reply rules' actions shared across a cluster (shared_actions.hpp,
// shared_action.hpp), with two hosts (two schedulers, two sets of rules)
// on the deterministic fake of Redis (fake_shared_state.hpp): an action one
// host's rule takes is applied by the other with the same end and logged
// once as from the cluster; a resume on either ends it on both; an action
// taken while Redis is away is shared once it is back; a restart of Redis
// (the board lost) neither loses an action nor applies one twice, nor
// brings an ended one back.  (The daemon runs these with a real Redis:
// scenario reply-action-cluster.)
#include "daemon_fixture.hpp"
#include "fake_driver.hpp"
#include "fake_shared_state.hpp"
#include "reply_actions.hpp"
#include "shared_actions.hpp"
#include "temp_dir.hpp"

#include <gtest/gtest.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using cqmgr::qmgr::testing::FakeShared;
using cqmgr::qmgr::testing::FakeStore;

namespace {

const core::AdminTarget smtp_d{"smtp", "d.example"};

const char* const rules = R"(
/\[TSS04\]/    suspend destination for 1h
/4\.7\.28/     throttle 2 destination until 2 delivered
/sender words/ suspend sender-destination for 1h
)";

// One host: its scheduler, rules, connection and sharing.
struct Host {
    core::test::FakeDriver drv;
    std::unique_ptr<core::Scheduler> sched;
    std::unique_ptr<CoreRequests> requests;
    std::unique_ptr<ReplyActions> actions;
    FakeShared shared;
    std::unique_ptr<SharedActions> sharing;
    std::vector<std::unique_ptr<core::Message>> msgs;

    // `scopes`: its sender groups, if any.
    Host(asio::io_context& io, const WallClock& clock, FakeStore& store, const std::string& name,
         ReplyActions::Scopes scopes = {})
        : shared(store) {
        core::TransportConfig tc;
        tc.fail_cohort_limit = 0;
        sched = std::make_unique<core::Scheduler>(
            core::SchedulerConfig{}, [tc](const std::string&) { return tc; }, drv);
        drv.sched = sched.get();
        sched->set_time(clock.now());
        requests = std::make_unique<CoreRequests>(io, *sched);
        actions = std::make_unique<ReplyActions>(
            RegexTable::parse("pcre", "/etc/postfix/reply_actions", rules,
                              [](const std::string&) {}),
            *requests, clock, [](const std::string&) { return std::string("/nonexistent"); },
            std::move(scopes));
        sharing = std::make_unique<SharedActions>(io, *actions, shared, clock, name);
        shared.start([](bool) {});
        sharing->start();
    }
    // An entry of a new message for d.example (of sender group `group`),
    // selected.
    core::Entry* select(core::SenderGroup group = 0) {
        auto m = std::make_unique<core::Message>();
        m->id = "M" + std::to_string(msgs.size());
        m->sender_group = group;
        sched->message_add(*m);
        core::Transport& t = sched->transport("smtp");
        sched->assign(*m, sched->queue_for(t, "d.example", "d.example"),
                      core::test::rcpt("r@d.example", 100));
        sched->batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
        return sched->select_entry(t);
    }
    // A delivery to d.example (of sender group `group`'s mail) ends with
    // `status` and `text` (0: sent).
    void deliver(int status, const std::string& text = {}, core::SenderGroup group = 0) {
        core::Entry* e = select(group);
        ASSERT_NE(e, nullptr);
        core::DeliveryResult r{core::DeliveryResult::Kind::replied, status, {}};
        if (status != 0) r.hop = {"4.7.0", text};
        actions->delivered(*e, r, 0);
        sched->delivery_done(e, r);
    }
    // Lets the store take every step and hands every answer back.
    void settle() {
        while (shared.deliver_notice() || shared.process() || shared.deliver()) {
        }
    }
};

const char* const tss04 = "host mx said: 421 4.7.0 [TSS04] unexpected volume";

// The sender groups of a host: campaign.example is its group `number`.
ReplyActions::Scopes campaign_as(core::SenderGroup number) {
    ReplyActions::Scopes s;
    s.sender_group = [number](const core::Entry& e) {
        return std::string(e.message->sender_group == number ? "campaign.example" : "");
    };
    s.sender_number = [number](const std::string& name) {
        return name == "campaign.example" ? number : core::SenderGroup{0};
    };
    return s;
}

struct Sharing : ::testing::Test {
    TempDir dir{"cqmgr-shared-actions"};
    cqmgr::qmgr::testing::FakeClock clock;
    cqmgr::qmgr::testing::LogCapture logs{dir.file("postlog")};
    asio::io_context io;
    FakeStore store;
    // The same group is numbered apart on each host.
    Host a{io, clock, store, "a.example", campaign_as(1)};
    Host b{io, clock, store, "b.example", campaign_as(3)};

    void SetUp() override {
        store.now = static_cast<double>(clock.t) * 1000;
        a.shared.connect();
        b.shared.connect();
        turn();
    }
    // A turn of both hosts' timers, with every step and answer through.
    void turn() {
        for (int i = 0; i < 2; ++i) {
            a.settle();
            b.settle();
            a.sharing->tick();
            b.sharing->tick();
            a.settle();
            b.settle();
        }
    }
    // Redis restarts empty while both hosts are away, and they come back.
    void restart_redis() {
        a.shared.disconnect();
        b.shared.disconnect();
        store.restart();
        a.shared.connect();
        b.shared.connect();
        turn();
    }
    // Host `c` comes and reads the board once.
    static void join(Host& c) {
        c.shared.connect();
        c.settle();
        c.sharing->tick();
        c.settle();
    }
    int count(const std::string& part) {
        int n = 0;
        for (const std::string& l : logs.lines())
            n += l.find(part) != std::string::npos;
        return n;
    }
};

} // namespace

TEST_F(Sharing, AnActionOneHostTakesTheOtherAppliesWithTheSameEnd) {
    a.deliver(1, tss04);
    ASSERT_TRUE(a.actions->active(smtp_d));
    const int64_t until = a.actions->active(smtp_d)->until;
    EXPECT_FALSE(b.actions->active(smtp_d));
    turn();
    const ReplyActions::Active* got = b.actions->active(smtp_d);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->until, until);
    EXPECT_EQ(got->rule, "pcre:/etc/postfix/reply_actions, line 2");
    EXPECT_EQ(b.sched->limits().rules().at(smtp_d),
              (core::RuleLimit{.hold = true, .until = until}));
    EXPECT_TRUE(logs.has_part("cqmgr: smtp:d.example: reply rule pcre:/etc/postfix/reply_actions, "
                              "line 2 (\"suspend destination for 1h\"): suspend for 3600s from "
                              "the cluster (a.example, 3600s left), from \"4.7.0 " +
                              std::string(tss04) + "\""))
        << logs.text();
    // Once: more turns change nothing.
    turn();
    turn();
    EXPECT_EQ(count("from the cluster"), 1) << logs.text();
    EXPECT_EQ(count("reply rule"), 2) << logs.text(); // a's own line and b's
}

TEST_F(Sharing, AResumeOnEitherHostEndsItOnBoth) {
    a.deliver(1, tss04);
    turn();
    ASSERT_TRUE(b.actions->active(smtp_d));
    EXPECT_EQ(b.actions->resume(smtp_d), (std::vector<core::AdminTarget>{smtp_d}));
    turn();
    EXPECT_FALSE(a.actions->active(smtp_d));
    EXPECT_FALSE(a.sched->limits().rules().count(smtp_d));
    EXPECT_TRUE(logs.has_part("(\"suspend destination for 1h\"): suspend ended in the cluster "
                              "(b.example)"))
        << logs.text();
    // Never back in force, whoever puts it on the board again.
    restart_redis();
    EXPECT_FALSE(a.actions->active(smtp_d));
    EXPECT_FALSE(b.actions->active(smtp_d));
    EXPECT_EQ(count("from the cluster"), 1) << logs.text();
}

TEST_F(Sharing, NDeliveriesOnOneHostEndItOnBoth) {
    a.deliver(1, "host mx said: 421 4.7.28 unusual rate");
    turn();
    ASSERT_TRUE(b.actions->active(smtp_d));
    EXPECT_EQ(b.actions->active(smtp_d)->deliveries, 2);
    b.deliver(0);
    b.deliver(0);
    EXPECT_FALSE(b.actions->active(smtp_d));
    turn();
    EXPECT_FALSE(a.actions->active(smtp_d));
    EXPECT_TRUE(logs.has_part("throttle ended in the cluster (b.example)")) << logs.text();
}

TEST_F(Sharing, RedisAwayEachHostGoesOnAloneAndSharesOnceBack) {
    a.shared.disconnect();
    b.shared.disconnect();
    turn();
    a.deliver(1, tss04);
    ASSERT_TRUE(a.actions->active(smtp_d)); // local behaviour
    turn();
    EXPECT_FALSE(b.actions->active(smtp_d));
    a.shared.connect();
    b.shared.connect();
    turn();
    EXPECT_TRUE(b.actions->active(smtp_d));
    EXPECT_EQ(count("from the cluster"), 1) << logs.text();
}

TEST_F(Sharing, ARestartOfRedisLosesNothingAndAppliesNothingTwice) {
    a.deliver(1, tss04);
    turn();
    ASSERT_TRUE(b.actions->active(smtp_d));
    a.shared.disconnect();
    b.shared.disconnect();
    store.restart(); // the board is lost
    turn();
    a.shared.connect();
    b.shared.connect();
    turn();
    EXPECT_TRUE(a.actions->active(smtp_d));
    EXPECT_TRUE(b.actions->active(smtp_d));
    EXPECT_EQ(store.boards["reply-actions"].size(), 1u); // put back
    EXPECT_EQ(count("from the cluster"), 1) << logs.text();
    // A third host that comes now gets it from the board.
    Host c{io, clock, store, "c.example"};
    join(c);
    EXPECT_TRUE(c.actions->active(smtp_d));
    // At its time it leaves the board.
    clock.t += 3600;
    store.now = static_cast<double>(clock.t) * 1000;
    EXPECT_TRUE(store.board_records("reply-actions").empty());
}

// A sender scope's action is shared as the others are: the other host
// bounds its group of the same name (whatever its number there), with the
// same end, and only that group's mail; a resume of the group there ends
// it on both, for good, and a restart of Redis brings neither it nor a
// second copy.
TEST_F(Sharing, ASenderGroupsActionIsSharedByTheGroupsName) {
    const char* words = "host mx said: 451 sender words";
    a.deliver(1, words, 1);
    const ReplyActions::Active* mine = a.actions->sender_active(smtp_d, "campaign.example");
    ASSERT_TRUE(mine);
    const int64_t until = mine->until;
    turn();
    const ReplyActions::Active* got = b.actions->sender_active(smtp_d, "campaign.example");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->group_number, 3);
    EXPECT_EQ(got->until, until);
    EXPECT_EQ(got->rule, "pcre:/etc/postfix/reply_actions, line 4");
    EXPECT_TRUE(b.actions->actives().empty()); // not the destination's
    EXPECT_TRUE(logs.has_part("cqmgr: sender campaign.example smtp:d.example: reply rule "
                              "pcre:/etc/postfix/reply_actions, line 4 (\"suspend "
                              "sender-destination for 1h\"): suspend for 3600s from the cluster "
                              "(a.example, 3600s left), 1 destination, from \"4.7.0 " +
                              std::string(words) + "\""))
        << logs.text();
    // The group's mail waits there; other mail goes.
    EXPECT_EQ(b.select(3), nullptr);
    core::Entry* other = b.select();
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->message->sender_group, 0);
    b.sched->check_invariants();
    turn();
    turn();
    EXPECT_EQ(count("from the cluster"), 1) << logs.text();
    // The board lost: put back once, applied nowhere again.
    restart_redis();
    EXPECT_EQ(store.boards["reply-actions"].size(), 1u);
    EXPECT_EQ(count("from the cluster"), 1) << logs.text();
    // A host where the name is no group has nothing to bound.
    Host c{io, clock, store, "c.example"};
    join(c);
    EXPECT_TRUE(c.actions->sender_actives().empty());
    EXPECT_EQ(count("from the cluster"), 1) << logs.text();
    // A resume of the group on b ends it on a.
    EXPECT_EQ(b.actions->resume_senders(smtp_d, "campaign.example").size(), 1u);
    turn();
    EXPECT_FALSE(a.actions->sender_active(smtp_d, "campaign.example"));
    EXPECT_TRUE(logs.has_part("cqmgr: sender campaign.example smtp:d.example: reply rule "
                              "pcre:/etc/postfix/reply_actions, line 4 (\"suspend "
                              "sender-destination for 1h\"): suspend ended in the cluster "
                              "(b.example)"))
        << logs.text();
    restart_redis();
    EXPECT_FALSE(a.actions->sender_active(smtp_d, "campaign.example"));
    EXPECT_FALSE(b.actions->sender_active(smtp_d, "campaign.example"));
}

// Taken while Redis is away, a group's action is shared once it is back,
// and one that ends at its time ends on every host by itself.
TEST_F(Sharing, ASenderGroupsActionTakenAloneIsSharedOnceBack) {
    a.shared.disconnect();
    b.shared.disconnect();
    turn();
    a.deliver(1, "host mx said: 451 sender words", 1);
    ASSERT_TRUE(a.actions->sender_active(smtp_d, "campaign.example")); // local behaviour
    turn();
    EXPECT_FALSE(b.actions->sender_active(smtp_d, "campaign.example"));
    a.shared.connect();
    b.shared.connect();
    turn();
    const ReplyActions::Active* got = b.actions->sender_active(smtp_d, "campaign.example");
    ASSERT_TRUE(got);
    clock.t = got->until;
    store.now = static_cast<double>(clock.t) * 1000;
    b.sched->set_time(clock.t);
    EXPECT_EQ(b.drv.expired, (std::vector<std::string>{"sender 3 smtp:d.example"}));
    EXPECT_TRUE(store.board_records("reply-actions").empty());
}

// The text of a shared action: read back as written (tabs and line ends
// of a reply made blanks), anything else is no action.
TEST(SharedAction, ItsTextReadsBack) {
    SharedAction a;
    a.scope = ReplyAction::Scope::provider;
    a.transport = "smtp";
    a.name = "yahoo";
    a.since = 1'800'000'000;
    a.until = 1'800'003'600;
    a.host = "mx1.example";
    a.rule = "pcre:/etc/postfix/reply_actions, line 3";
    a.action = "suspend provider for 1h";
    a.reason = "4.7.0 host mx said:\t421 [TSS04]\nmore";
    EXPECT_EQ(a.key(), "smtp:provider yahoo");
    EXPECT_EQ(a.id(), "smtp:provider yahoo|1800000000|pcre:/etc/postfix/reply_actions, line 3");
    auto back = decode_shared_action(encode_shared_action(a));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->reason, "4.7.0 host mx said: 421 [TSS04] more");
    back->reason = a.reason;
    EXPECT_EQ(*back, a);
    SharedAction t = a;
    t.scope = ReplyAction::Scope::transport;
    t.name.clear();
    EXPECT_EQ(t.key(), "smtp");
    EXPECT_EQ(decode_shared_action(encode_shared_action(t))->name, "");
    // A sender scope's, with its group (format 2).
    SharedAction g = a;
    g.scope = ReplyAction::Scope::sender_provider;
    g.group = "class bulk";
    g.action = "suspend sender-provider for 1h";
    EXPECT_EQ(g.key(), "sender class bulk smtp:provider yahoo");
    const std::string sender = encode_shared_action(g);
    EXPECT_TRUE(sender.starts_with("2\tsender-provider\tsmtp\tyahoo\tclass bulk\t1800000000\t"))
        << sender;
    back = decode_shared_action(sender);
    ASSERT_TRUE(back);
    back->reason = g.reason;
    EXPECT_EQ(*back, g);
    for (std::string bad :
         {"1" + sender.substr(1), "2\tprovider" + sender.substr(17),
          sender.substr(0, sender.find("class")) + sender.substr(sender.find("class") + 11),
          sender.substr(0, sender.find("class")) + "-" + sender.substr(sender.find("class") + 10)})
        EXPECT_FALSE(decode_shared_action(bad)) << bad;
    std::string good = encode_shared_action(a);
    for (std::string bad :
         {std::string(), "2" + good.substr(1), good + "\textra", good.substr(0, good.rfind('\t')),
          "1\tsender-provider" + good.substr(10), "1\ttransport" + good.substr(10)})
        EXPECT_FALSE(decode_shared_action(bad)) << bad;
}
