// The control commands against a real scheduler on a fixed clock, each
// given as the request line the grammar parses: their log lines as
// docs/control-protocol.md shows them, their replies (keys in the
// protocol's order), the kept settings (in a state store in a temporary
// directory), expiry and restore.
#include "control_commands.hpp"
#include "control_dispatch.hpp"
#include "temp_dir.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <memory>

using namespace cqmgr;
using namespace cqmgr::qmgr;
namespace fs = std::filesystem;
using json = nlohmann::json;

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
    // The reply to the command `line` from user `uid`, as an object
    // compared field by field.
    json run(std::string_view line, int64_t uid = 0) { return json::parse(reply_line(line, uid)); }
    // The reply line itself, keys in the order they are sent.
    std::string reply_line(std::string_view line, int64_t uid = 0) {
        control::Parsed p = control::parse_request(line);
        EXPECT_TRUE(p.ok()) << line << ": " << p.error;
        if (!p.ok()) return control::reply_line(control::error_reply(p.error));
        return control::reply_line(control->execute(*p.request, uid));
    }
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
    json r = run("suspend smtp:example.com for 600 reason maintenance");
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
    EXPECT_EQ(kept[0].hold.since, 1795500000 - 600); // when it was set

    r = run("resume smtp:example.com");
    EXPECT_EQ(lines.back(), "control: resume smtp:example.com by uid 0");
    EXPECT_EQ(r["changed"], json::parse(R"([{"target":"smtp:example.com","suspended":false}])"));
    EXPECT_TRUE(state->load().empty());
    // Nothing left to resume: not an error, nothing changed.
    r = run("resume smtp:example.com");
    EXPECT_TRUE(r["ok"].get<bool>());
    EXPECT_EQ(r["changed"], json::array());
}

// The replies go out with their keys in the protocol's order: "ok" first,
// then what changed, each changed object's "target" first.
TEST_F(Control, RepliesKeepTheProtocolsOrderOfKeys) {
    EXPECT_EQ(reply_line("suspend smtp:example.com for 600 reason maintenance"),
              R"({"ok":true,"changed":[{"target":"smtp:example.com","suspended":true,)"
              R"("until":1795500000,"reason":"maintenance"}]})"
              "\n");
    EXPECT_EQ(reply_line("throttle example.com 2"),
              R"({"ok":true,"changed":[{"target":"example.com","queues":[],)"
              R"("throttle":{"concurrency":2,"until":null}}]})"
              "\n");
    flush_answer = ControlCommands::FlushDeferred::busy;
    EXPECT_EQ(reply_line("flush example.org"),
              R"({"ok":true,"changed":[],"deferred":"not asked: too many flushes are waiting )"
              R"(for the flush service; try again later"})"
              "\n");
}

TEST_F(Control, SuspendWithoutDurationOrReasonAndOfAWholeTransport) {
    json r = run("suspend relay", 107);
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_EQ(lines.back(), "control: suspend relay by uid 107");
    EXPECT_EQ(r["changed"][0]["until"], nullptr);
    EXPECT_TRUE(sched->transport("relay").hold);
}

TEST_F(Control, ThrottleOfABareDestinationListsItsQueues) {
    message("example.com", 3, "smtp");
    message("example.com", 1, "relay");
    json r = run("throttle example.com 2 for 600");
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_EQ(lines.back(),
              "control: throttle example.com concurrency 2 until 2026-11-24T06:00:00Z (600s) by "
              "uid 0");
    EXPECT_EQ(r["changed"][0]["throttle"], (json{{"concurrency", 2}, {"until", 1795500000}}));
    EXPECT_EQ(r["changed"][0]["queues"], (json{"relay:example.com", "smtp:example.com"}));
    EXPECT_EQ(sched->transport("smtp").queue_by_name.at("example.com")->select_window(), 1);
    EXPECT_EQ(sched->transport("smtp").queue_by_name.at("example.com")->limits.cap->concurrency, 2);

    r = run("unthrottle example.com");
    EXPECT_EQ(lines.back(), "control: unthrottle example.com by uid 0");
    EXPECT_EQ(r["changed"][0]["throttle"], nullptr);
    EXPECT_FALSE(sched->transport("smtp").queue_by_name.at("example.com")->limits.cap);
    sched->check_invariants();
}

TEST_F(Control, SettingsEndByThemselvesAndAreForgotten) {
    run("suspend smtp:example.com for 60");
    run("throttle slow.example 1 for 120");
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
    json r = run("flush smtp:example.com");
    ASSERT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_EQ(lines.back(), "control: flush smtp:example.com by uid 0");
    EXPECT_EQ(r["changed"], json::parse(R"([{"target":"smtp:example.com","revived":true}])"));
    EXPECT_EQ(r["deferred"], "asked the flush service to deliver the deferred mail for "
                             "example.com, as postqueue -s does");
    EXPECT_EQ(flushed, std::vector<std::string>{"example.com"});
    EXPECT_FALSE(t.queue_by_name.count("example.com") && t.queue_by_name.at("example.com")->dead());
    // Nothing dead any more: nothing revived, the flush service asked again.
    r = run("flush example.com");
    EXPECT_EQ(r["changed"], json::array());
    EXPECT_EQ(flushed.size(), 2u);
    sched->check_invariants();
}

TEST_F(Control, FlushSaysWhenTheDeferredMailIsNotEligible) {
    flush_answer = ControlCommands::FlushDeferred::not_eligible;
    json r = run("flush example.org");
    EXPECT_EQ(r, (json{{"ok", true},
                       {"changed", json::array()},
                       {"deferred", "not eligible for fast flush (fast_flush_domains); deferred "
                                    "mail waits for its retry time, see postqueue -f"}}));
    flush_answer = ControlCommands::FlushDeferred::service_asked;
    r = run("flush example.org");
    EXPECT_EQ(r["deferred"], "asked the flush service to deliver the deferred mail for "
                             "example.org, as postqueue -s does, if fast_flush_domains (a lookup "
                             "table) lists it");
    // The other commands have no such field.
    EXPECT_FALSE(run("suspend smtp").contains("deferred"));
}

// A line the grammar refuses never reaches the commands: the daemon's
// dispatch answers it with an error, and nothing changes, is logged or is
// kept.
TEST_F(Control, MalformedCommandsGetAnErrorAndChangeNothing) {
    MessageTable messages;
    ArrivalIndex arrivals;
    DeliveryRecord record(*sched);
    Counters counters;
    ControlQueries queries(ControlSources{*sched, messages, arrivals, record, counters, clock,
                                          [] { return FeedState{}; }},
                           ControlIdentity{1, "cqmgr test", {start_time, 0}});
    ControlDispatch dispatch(queries, *control);
    for (const char* line : {
             "suspend :example.com",        // no transport
             "suspend example.com:",        // no destination after the colon
             "resume",                      // no target
             "throttle smtp:example.com",   // no concurrency
             "throttle smtp:example.com 0", // a concurrency below 1
             "flush",                       // no destination
             "suspend smtp for 366d",       // longer than 365 days
             "suspend smtp for -1",         // not a duration
             "unthrottle a b",              // a word too many
         }) {
        json r = json::parse(dispatch.answer(line, 0));
        EXPECT_FALSE(r["ok"].get<bool>()) << line << ": " << r;
        EXPECT_TRUE(r["error"].is_string()) << r;
    }
    EXPECT_TRUE(lines.empty());
    EXPECT_TRUE(sched->limits().holds().empty() && sched->limits().caps().empty());
    auto kept = store->get_control();
    ASSERT_TRUE(kept);
    EXPECT_FALSE(*kept); // nothing kept
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
        r = run("suspend smtp:d" + std::to_string(n) + ".example reason " + reason);
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
    r = run("suspend smtp:d0.example reason short");
    EXPECT_TRUE(r["ok"].get<bool>()) << r;
    EXPECT_FALSE(r.contains("warning")) << r;
    // What was kept comes back after a restart, every one of them.
    restart();
    control->restore();
    EXPECT_EQ(sched->limits().holds().size(), static_cast<size_t>(n));
}

TEST_F(Control, KeptSettingsAreRestoredAfterARestart) {
    run("suspend smtp:example.com reason maintenance");
    run("throttle slow.example 3 for 60");
    run("suspend relay for 30");
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
