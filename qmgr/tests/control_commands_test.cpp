// The control commands against a real scheduler on a fixed clock: their
// log lines as docs/control-protocol.md shows them, their replies, the kept
// settings (in a state store in a temporary directory), expiry and
// restore.
#include "control_commands.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <memory>

using namespace cqmgr;
using namespace cqmgr::qmgr;
namespace fs = std::filesystem;
using json = nlohmann::json;
using Kind = ControlCommand::Kind;

namespace {

// 2026-11-24T05:50:00Z: ten minutes before the protocol page's example time.
constexpr int64_t start_time = 1795500000 - 600;

struct FakeClock final : WallClock {
    int64_t t = start_time;
    int64_t now() const override { return t; }
    protocol::TimeVal precise() const override { return {t, 0}; }
};

// The scheduler's driver: reads nothing, frees finished messages, hands
// expiry notices to the commands.
struct Driver final : core::Driver {
    core::Scheduler* sched = nullptr;
    ControlCommands* control = nullptr;
    void refill(core::Message& m, int) override { sched->batch_done(m, false, 0); }
    void message_done(core::Message& m) override { sched->message_free(m); }
    void defer_recipients(core::Message&, const std::vector<core::Recipient>&,
                          const core::Dsn&) override {}
    void admin_expired(core::AdminKind kind, const core::AdminTarget& target) override {
        control->expired(kind, target);
    }
};

struct Control : ::testing::Test {
    TempDir tmp{"cqmgr-control"};
    fs::path dir = tmp.path();
    FakeClock clock;
    Driver driver;
    std::vector<std::unique_ptr<core::Message>> msgs; // outlive the scheduler
    std::unique_ptr<core::Scheduler> sched;
    std::shared_ptr<state::Store> store;
    std::unique_ptr<AdminState> state;
    std::unique_ptr<ControlCommands> control;
    std::vector<std::string> lines;
    std::vector<std::string> flushed;
    // What the flush service callback answers.
    ControlCommands::FlushDeferred flush_answer = ControlCommands::FlushDeferred::asked;

    Control() { restart(); }
    ~Control() override {
        control.reset();
        sched.reset();
    }
    // A fresh scheduler, state and commands on the same store, opened
    // again.
    void restart() {
        control.reset();
        sched.reset();
        state.reset();
        store.reset();
        state::Store::Options o;
        o.no_sync = true;
        store =
            state::Store::open((dir / "cqmgr-state.lmdb").string(), [](const std::string&) {}, o);
        ASSERT_TRUE(store);
        core::TransportConfig tc;
        tc.init_dest_concurrency = 1;
        tc.fail_cohort_limit = 1;
        tc.dest_recipient_limit = 1;
        sched = std::make_unique<core::Scheduler>(
            core::SchedulerConfig{}, [tc](const std::string&) { return tc; }, driver);
        sched->set_time(clock.t);
        state = std::make_unique<AdminState>(store);
        control = std::make_unique<ControlCommands>(
            *sched, *state, clock,
            [this](const std::string& s) {
                flushed.push_back(s);
                return flush_answer;
            },
            [this](const std::string& l) { lines.push_back(l); });
        driver.sched = sched.get();
        driver.control = control.get();
    }
    json run(ControlCommand c) { return control->execute(c); }
    // A message with `n` recipients for `queue` on `transport`.
    core::Message& message(const std::string& queue, int n, const std::string& transport = "smtp") {
        auto m = std::make_unique<core::Message>();
        m->id = "M" + std::to_string(msgs.size());
        sched->message_add(*m);
        core::Transport& t = sched->transport(transport);
        for (int i = 0; i < n; ++i) {
            core::Recipient r(0, "r" + std::to_string(i) + "@" + queue, "", "", 0);
            sched->assign(*m, sched->queue_for(t, queue, queue), r);
        }
        sched->batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
        return *msgs.back();
    }
};

} // namespace

TEST_F(Control, SuspendAndResumeAreLoggedAnsweredAndKept) {
    json r = run({Kind::suspend, "smtp", "example.com", 600, "maintenance", 0, 0});
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "control: suspend smtp:example.com until 2026-11-24T06:00:00Z (600s) by "
                        "uid 0: maintenance");
    ASSERT_EQ(r["changed"].size(), 1u);
    EXPECT_EQ(r["changed"][0], (json{{"target", "smtp:example.com"},
                                     {"suspended", true},
                                     {"until", 1795500000},
                                     {"reason", "maintenance"}}));
    EXPECT_FALSE(r.contains("warning"));
    EXPECT_EQ(sched->limits().holds().size(), 1u);
    auto kept = state->load();
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].target.text(), "smtp:example.com");
    EXPECT_EQ(kept[0].hold.reason, "maintenance");

    r = run({Kind::resume, "smtp", "example.com", 0, "", 0, 0});
    EXPECT_EQ(lines.back(), "control: resume smtp:example.com by uid 0");
    EXPECT_EQ(r["changed"], json::parse(R"([{"target":"smtp:example.com","suspended":false}])"));
    EXPECT_TRUE(state->load().empty());
    // Nothing left to resume: not an error, nothing changed.
    r = run({Kind::resume, "smtp", "example.com", 0, "", 0, 0});
    EXPECT_TRUE(r["ok"].get<bool>());
    EXPECT_EQ(r["changed"], json::array());
}

TEST_F(Control, SuspendWithoutDurationOrReasonAndOfAWholeTransport) {
    json r = run({Kind::suspend, "relay", "", 0, "", 0, 107});
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_EQ(lines.back(), "control: suspend relay by uid 107");
    EXPECT_EQ(r["changed"][0]["until"], nullptr);
    EXPECT_TRUE(sched->transport("relay").hold);
}

TEST_F(Control, ThrottleOfABareDestinationListsItsQueues) {
    message("example.com", 3, "smtp");
    message("example.com", 1, "relay");
    json r = run({Kind::throttle, "", "example.com", 600, "", 2, 0});
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_EQ(lines.back(),
              "control: throttle example.com concurrency 2 until 2026-11-24T06:00:00Z (600s) by "
              "uid 0");
    EXPECT_EQ(r["changed"][0]["throttle"], (json{{"concurrency", 2}, {"until", 1795500000}}));
    EXPECT_EQ(r["changed"][0]["queues"], (json{"relay:example.com", "smtp:example.com"}));
    EXPECT_EQ(sched->transport("smtp").queue_by_name.at("example.com")->select_window(), 1);
    EXPECT_EQ(sched->transport("smtp").queue_by_name.at("example.com")->limits.cap->concurrency, 2);

    r = run({Kind::unthrottle, "", "example.com", 0, "", 0, 0});
    EXPECT_EQ(lines.back(), "control: unthrottle example.com by uid 0");
    EXPECT_EQ(r["changed"][0]["throttle"], nullptr);
    EXPECT_FALSE(sched->transport("smtp").queue_by_name.at("example.com")->limits.cap);
    sched->check_invariants();
}

TEST_F(Control, SettingsEndByThemselvesAndAreForgotten) {
    run({Kind::suspend, "smtp", "example.com", 60, "", 0, 0});
    run({Kind::throttle, "", "slow.example", 120, "", 1, 0});
    EXPECT_EQ(state->load().size(), 2u);
    clock.t += 60;
    sched->set_time(clock.t);
    EXPECT_EQ(lines.back(), "control: suspension of smtp:example.com expired");
    EXPECT_EQ(state->load().size(), 1u);
    clock.t += 60;
    sched->set_time(clock.t);
    EXPECT_EQ(lines.back(), "control: throttle of slow.example expired");
    EXPECT_TRUE(state->load().empty());
    EXPECT_TRUE(sched->limits().holds().empty() && sched->limits().caps().empty());
}

TEST_F(Control, FlushRevivesADeadDestinationAndAsksTheFlushService) {
    message("example.com", 3);
    core::Transport& t = sched->transport("smtp");
    core::Entry* e = sched->select_entry(t);
    ASSERT_TRUE(e);
    sched->delivery_done(
        e,
        core::DeliveryResult{core::DeliveryResult::Kind::replied, 1, {"4.4.1", "connect refused"}});
    ASSERT_TRUE(t.queue_by_name.at("example.com")->dead());
    json r = run({Kind::flush, "smtp", "example.com", 0, "", 0, 0});
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_EQ(lines.back(), "control: flush smtp:example.com by uid 0");
    EXPECT_EQ(r["changed"], json::parse(R"([{"target":"smtp:example.com","revived":true}])"));
    EXPECT_EQ(r["deferred"], "asked the flush service to deliver the deferred mail for "
                             "example.com, as postqueue -s does");
    EXPECT_EQ(flushed, std::vector<std::string>{"example.com"});
    EXPECT_FALSE(t.queue_by_name.count("example.com") && t.queue_by_name.at("example.com")->dead());
    // Nothing dead any more: nothing revived, the flush service asked again.
    r = run({Kind::flush, "", "example.com", 0, "", 0, 0});
    EXPECT_EQ(r["changed"], json::array());
    EXPECT_EQ(flushed.size(), 2u);
    sched->check_invariants();
}

TEST_F(Control, FlushSaysWhenTheDeferredMailIsNotEligible) {
    flush_answer = ControlCommands::FlushDeferred::not_eligible;
    json r = run({Kind::flush, "", "example.org", 0, "", 0, 0});
    EXPECT_EQ(r, (json{{"ok", true},
                       {"changed", json::array()},
                       {"deferred", "not eligible for fast flush (fast_flush_domains); deferred "
                                    "mail waits for its retry time, see postqueue -f"}}));
    flush_answer = ControlCommands::FlushDeferred::service_asked;
    r = run({Kind::flush, "", "example.org", 0, "", 0, 0});
    EXPECT_EQ(r["deferred"], "asked the flush service to deliver the deferred mail for "
                             "example.org, as postqueue -s does, if fast_flush_domains (a lookup "
                             "table) lists it");
    // The other commands have no such field.
    EXPECT_FALSE(run({Kind::suspend, "smtp", "", 0, "", 0, 0}).contains("deferred"));
}

TEST_F(Control, MalformedCommandsGetAnErrorAndChangeNothing) {
    for (const ControlCommand& c : {
             ControlCommand{Kind::suspend, "", "example.com", 0, "", 0, 0},
             ControlCommand{Kind::resume, "", "", 0, "", 0, 0},
             ControlCommand{Kind::throttle, "smtp", "", 0, "", 2, 0},
             ControlCommand{Kind::throttle, "smtp", "example.com", 0, "", 0, 0},
             ControlCommand{Kind::flush, "smtp", "", 0, "", 0, 0},
             ControlCommand{Kind::suspend, "smtp", "", max_control_duration + 1, "", 0, 0},
             ControlCommand{Kind::suspend, "smtp", "", -1, "", 0, 0},
         }) {
        json r = run(c);
        EXPECT_FALSE(r["ok"].get<bool>()) << r;
        EXPECT_TRUE(r["error"].is_string()) << r;
    }
    EXPECT_TRUE(lines.empty());
    EXPECT_TRUE(sched->limits().holds().empty() && sched->limits().caps().empty());
    std::string doc, error;
    EXPECT_EQ(store->get_control(doc, error), state::Store::Found::no);
}

TEST_F(Control, ASettingPastTheLimitOfWhatIsKeptIsRefused) {
    // Reasons of 3,900 bytes (a request line holds 4,096): about 1,070 of
    // them fill the kept document's 4 MiB.  The first thousand go to the
    // scheduler directly (saving each would rewrite megabytes).
    const std::string reason(3900, 'r');
    int n = 0;
    for (; n < 1000; ++n)
        sched->set_limit({"smtp", "d" + std::to_string(n) + ".example"},
                         core::LimitChange::hold(core::AdminHold{0, reason, 0}));
    ASSERT_TRUE(AdminState::fits(admin_records(sched->limits().holds(), sched->limits().caps())));
    json r;
    for (; n < 1200; ++n) {
        r = run({Kind::suspend, "smtp", "d" + std::to_string(n) + ".example", 0, reason, 0, 0});
        if (!r["ok"].get<bool>()) break;
        EXPECT_FALSE(r.contains("warning")) << r;
    }
    ASSERT_LT(n, 1200) << "never refused";
    EXPECT_GT(n, 1050);
    EXPECT_NE(r["error"].get<std::string>().find("resume or unthrottle some first"),
              std::string::npos)
        << r;
    // Nothing changed: not in the scheduler, not logged.
    EXPECT_EQ(sched->limits().holds().size(), static_cast<size_t>(n));
    EXPECT_EQ(lines.size(), static_cast<size_t>(n - 1000));
    // Replacing a setting by a shorter one is not refused.
    r = run({Kind::suspend, "smtp", "d0.example", 0, "short", 0, 0});
    EXPECT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_FALSE(r.contains("warning")) << r;
    // What was kept comes back after a restart, every one of them.
    restart();
    control->restore();
    EXPECT_EQ(sched->limits().holds().size(), static_cast<size_t>(n));
}

TEST_F(Control, KeptSettingsAreRestoredAfterARestart) {
    run({Kind::suspend, "smtp", "example.com", 0, "maintenance", 0, 0});
    run({Kind::throttle, "", "slow.example", 60, "", 3, 0});
    run({Kind::suspend, "relay", "", 30, "", 0, 0});
    clock.t += 45; // the relay suspension ends while cqmgr is down
    restart();
    lines.clear();
    control->restore();
    EXPECT_EQ(lines, (std::vector<std::string>{
                         "control: suspension of relay expired at 2026-11-24T05:50:30Z while "
                         "cqmgr was not running",
                         "control: restored suspension of smtp:example.com by uid 0: maintenance",
                         "control: restored throttle of slow.example concurrency 3 until "
                         "2026-11-24T05:51:00Z (15s left) by uid 0",
                     }));
    // The ended one is dropped from the file: the next start does not log
    // it again.
    EXPECT_EQ(state->load().size(), 2u);
    restart();
    lines.clear();
    control->restore();
    EXPECT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[1].rfind("control: restored throttle of slow.example", 0), 0u) << lines[1];
    ASSERT_EQ(sched->limits().holds().size(), 1u);
    EXPECT_EQ(sched->limits().holds().begin()->second.reason, "maintenance");
    ASSERT_EQ(sched->limits().caps().size(), 1u);
    EXPECT_EQ(sched->limits().caps().begin()->second.until, start_time + 60);
    // A queue created after the restart picks its setting up.
    message("slow.example", 2);
    EXPECT_EQ(sched->transport("smtp").queue_by_name.at("slow.example")->limits.cap->concurrency,
              3);
    sched->check_invariants();
    clock.t += 15;
    sched->set_time(clock.t);
    EXPECT_EQ(lines.back(), "control: throttle of slow.example expired");
}
