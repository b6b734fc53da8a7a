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

    Host(asio::io_context& io, const WallClock& clock, FakeStore& store, const std::string& name)
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
            *requests, clock, [](const std::string&) { return std::string("/nonexistent"); });
        sharing = std::make_unique<SharedActions>(io, *actions, shared, clock, name);
        shared.start([](bool) {});
        sharing->start();
    }
    // An entry of a new message for d.example, selected.
    core::Entry* select() {
        auto m = std::make_unique<core::Message>();
        m->id = "M" + std::to_string(msgs.size());
        sched->message_add(*m);
        core::Transport& t = sched->transport("smtp");
        sched->assign(*m, sched->queue_for(t, "d.example", "d.example"),
                      core::test::rcpt("r@d.example", 100));
        sched->batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
        return sched->select_entry(t);
    }
    // A delivery to d.example ends with `status` and `text` (0: sent).
    void deliver(int status, const std::string& text = {}) {
        core::Entry* e = select();
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

struct Sharing : ::testing::Test {
    TempDir dir{"cqmgr-shared-actions"};
    cqmgr::qmgr::testing::FakeClock clock;
    cqmgr::qmgr::testing::LogCapture logs{dir.file("postlog")};
    asio::io_context io;
    FakeStore store;
    Host a{io, clock, store, "a.example"};
    Host b{io, clock, store, "b.example"};

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
    a.shared.disconnect();
    b.shared.disconnect();
    store.restart();
    a.shared.connect();
    b.shared.connect();
    turn();
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
    c.shared.connect();
    c.settle();
    c.sharing->tick();
    c.settle();
    EXPECT_TRUE(c.actions->active(smtp_d));
    // At its time it leaves the board.
    clock.t += 3600;
    store.now = static_cast<double>(clock.t) * 1000;
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
    std::string good = encode_shared_action(a);
    for (std::string bad :
         {std::string(), "2" + good.substr(1), good + "\textra", good.substr(0, good.rfind('\t')),
          "1\tsender-provider" + good.substr(10), "1\ttransport" + good.substr(10)})
        EXPECT_FALSE(decode_shared_action(bad)) << bad;
}
