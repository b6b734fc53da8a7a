// The destination state store as the daemon uses it: changes reported by a
// real scheduler core reach the store, and a store's records come back as
// dead queues and remembered windows.  Stores live in temporary directories.
#include "cqmgr/test/temp_dir.hpp"
#include "destination_state.hpp"
#include "fake_driver.hpp"

#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;

namespace {

namespace fs = std::filesystem;

struct FakeClock final : WallClock {
    int64_t t = 1000;
    int64_t now() const override { return t; }
    protocol::TimeVal precise() const override { return {t, 0}; }
};

// The core tests' driver, telling the state what the daemon's driver does.
struct StateDriver : core::test::FakeDriver {
    DestinationState* state = nullptr;
    void queue_window(const core::Queue& q, bool) override {
        if (state) state->queue_changed(q);
    }
    void queue_freed(const core::Queue& q) override {
        if (state) state->queue_freed(q);
    }
};

const core::Dsn refused{"4.4.1", "connect to down.example: Connection refused"};

struct DestinationStateTest : ::testing::Test {
    test::TempDir tmp{"cqmgr-dstate-test"};
    std::string dir = tmp.str(), path = tmp.file("cqmgr-state.lmdb");
    asio::io_context io;
    FakeClock clock;
    StateDriver drv;
    core::TransportConfig tc;
    std::unique_ptr<core::Scheduler> sched;
    std::unique_ptr<DestinationState> ds;
    std::vector<std::unique_ptr<core::Message>> msgs;

    void SetUp() override {
        tc.dest_recipient_limit = 1;
        tc.init_dest_concurrency = 1;
        tc.dest_concurrency_limit = 10;
    }
    void TearDown() override { ds.reset(); }

    static void no_warning(const std::string& w) { ADD_FAILURE() << w; }

    std::unique_ptr<state::Store> open_store() { return state::Store::open(path, no_warning); }

    // A scheduler at clock.t with the state kept in the store at `path`,
    // restored from it.
    // `learned` is offered the stored learned limits.
    void start(const DestinationState::LearnedRestore& learned = {}) {
        sched = std::make_unique<core::Scheduler>(
            core::SchedulerConfig{}, [this](const std::string&) { return tc; }, drv);
        drv.sched = sched.get();
        sched->set_time(clock.t);
        ds = std::make_unique<DestinationState>(io, clock, open_store(), 86400, "retry");
        drv.state = ds.get();
        ds->restore(*sched, learned);
    }
    // A stored record of smtp's `dest`, last changed at `updated`.
    static state::DestinationRecord record(const std::string& dest, int64_t updated = 990) {
        state::DestinationRecord r;
        r.transport = "smtp";
        r.destination = dest;
        r.nexthop = dest;
        r.updated_at = updated;
        return r;
    }
    // Stops the state (committing everything) and reads the store back.
    std::map<std::string, state::DestinationRecord> stored() {
        drv.state = nullptr;
        ds.reset();
        std::map<std::string, state::DestinationRecord> out;
        for (auto& r : open_store()->load(0, no_warning).records)
            out[r.transport + " " + r.destination] = r;
        return out;
    }
    void message(const std::string& id, int n, const std::string& queue) {
        auto m = std::make_unique<core::Message>();
        m->id = id;
        sched->message_add(*m);
        core::Transport& t = sched->transport("smtp");
        for (int i = 0; i < n; ++i)
            sched->assign(*m, sched->queue_for(t, queue, queue),
                          core::test::rcpt(id + std::to_string(i) + "@" + queue));
        sched->batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
    }
    // Selects and finishes every entry of smtp, each with `hop`, and tells
    // the state as the delivery part does.
    void deliver_all(const core::Dsn& hop = {}, int status = 0) {
        core::Transport& t = sched->transport("smtp");
        while (core::Entry* e = sched->select_entry(t)) {
            ds->delivery_ended(*e->queue, hop);
            sched->delivery_done(
                e, core::DeliveryResult{core::DeliveryResult::Kind::replied, status, hop});
        }
    }
    void put(std::vector<state::DestinationRecord> records) {
        auto s = open_store();
        state::Store::Batch b;
        b.puts = std::move(records);
        auto written = s->apply(b);
        ASSERT_TRUE(written) << written.error().message();
    }
};

TEST_F(DestinationStateTest, NothingIsKeptWithoutAStore) {
    sched = std::make_unique<core::Scheduler>(
        core::SchedulerConfig{}, [this](const std::string&) { return tc; }, drv);
    drv.sched = sched.get();
    DestinationState off(io, clock);
    EXPECT_FALSE(off.enabled());
    EXPECT_FALSE(off.usable()); // what cqmgr_state_store_up shows when configured
    EXPECT_TRUE(off.restore(*sched).empty());
    message("A", 1, "x.example");
    off.queue_changed(*sched->transport("smtp").queue_by_name.at("x.example"));
    EXPECT_TRUE(off.records().empty());
    off.finish();
    EXPECT_FALSE(fs::exists(path));
}

TEST_F(DestinationStateTest, DeathIsWrittenWithItsReasonAndTime) {
    start();
    message("A", 3, "down.example");
    deliver_all(refused, 1);
    auto s = stored();
    ASSERT_TRUE(s.contains("smtp down.example"));
    const auto& r = s.at("smtp down.example");
    EXPECT_EQ(r.dead_until, 1000 + core::SchedulerConfig{}.minimal_backoff_time);
    EXPECT_EQ(r.dead_status, "4.4.1");
    EXPECT_EQ(r.dead_reason, "delivery temporarily suspended: " + refused.reason);
    EXPECT_EQ(r.window, 0);
    EXPECT_EQ(r.last_dsn_status, "4.4.1");
    EXPECT_EQ(r.last_dsn_text, refused.reason);
    EXPECT_EQ(r.last_delivery, 1000);
    EXPECT_EQ(r.updated_at, 1000);
    // The retry transport's queues are not destinations.
    for (const auto& [key, rec] : s)
        EXPECT_NE(rec.transport, "retry") << key;
}

TEST_F(DestinationStateTest, WindowIsWrittenAfterFeedback) {
    start();
    message("A", 12, "big.example");
    core::Transport& t = sched->transport("smtp");
    // Deliveries overlap, so positive feedback opens the window.
    for (int round = 0; round < 6; ++round) {
        std::vector<core::Entry*> busy;
        while (core::Entry* e = sched->select_entry(t))
            busy.push_back(e);
        for (core::Entry* e : busy) {
            ds->delivery_ended(*e->queue, {"2.0.0", "250 ok"});
            sched->delivery_done(e, core::DeliveryResult{});
        }
    }
    auto s = stored();
    ASSERT_TRUE(s.contains("smtp big.example"));
    EXPECT_GT(s.at("smtp big.example").window, 1);
    EXPECT_EQ(s.at("smtp big.example").dead_until, 0);
    EXPECT_EQ(s.at("smtp big.example").last_dsn_text, "250 ok");
}

TEST_F(DestinationStateTest, AQueueInAFreedQueuesSlotKeepsItsOwnRecord) {
    start();
    message("A", 1, "first.example");
    uint32_t slot = sched->find_queue("smtp", "first.example")->slot;
    deliver_all({"2.0.0", "250 first"}); // the queue is freed, its slot too
    ASSERT_EQ(sched->find_queue("smtp", "first.example"), nullptr);
    message("B", 1, "second.example");
    ASSERT_EQ(sched->find_queue("smtp", "second.example")->slot, slot);
    deliver_all({"2.0.0", "250 second"});
    auto s = stored();
    ASSERT_TRUE(s.contains("smtp first.example"));
    ASSERT_TRUE(s.contains("smtp second.example"));
    EXPECT_EQ(s.at("smtp first.example").last_dsn_text, "250 first");
    EXPECT_EQ(s.at("smtp second.example").last_dsn_text, "250 second");
}

TEST_F(DestinationStateTest, ChangesGoOutWithinASecondWithoutAShutdown) {
    start();
    EXPECT_TRUE(ds->usable());
    const size_t commits = ds->commits();
    message("A", 1, "up.example");
    deliver_all({"2.0.0", "250 ok"});
    // The flush timer's handler is the one thing the loop has to run.
    ASSERT_EQ(io.run_one_for(std::chrono::seconds(30)), 1u);
    ds->drain();
    EXPECT_TRUE(ds->usable());
    EXPECT_EQ(ds->commits(), commits + 1); // cqmgr_state_store_commits_total
    // What a kill -9 now would leave behind: the data file as it is (a
    // copy, since one process must not open an environment twice).
    std::string copy = dir + "/copy.lmdb";
    fs::copy_file(path, copy);
    auto loaded = state::Store::open(copy, no_warning)->load(0, no_warning);
    ASSERT_EQ(loaded.records.size(), 1u);
    EXPECT_EQ(loaded.records[0].destination, "up.example");
    EXPECT_EQ(loaded.records[0].last_dsn_text, "250 ok");
}

TEST_F(DestinationStateTest, DeathGoesToTheWriterAtOnce) {
    start();
    message("A", 2, "down.example");
    deliver_all(refused, 1);
    // No flush timer ran: the death went to the writer with the call that
    // reported it.  Once the writer has committed it, what a kill -9 would
    // leave behind (a copy, since one process must not open an environment
    // twice):
    ds->drain();
    std::string copy = dir + "/copy.lmdb";
    fs::copy_file(path, copy);
    auto loaded = state::Store::open(copy, no_warning)->load(0, no_warning);
    ASSERT_EQ(loaded.records.size(), 1u);
    EXPECT_EQ(loaded.records[0].destination, "down.example");
    EXPECT_EQ(loaded.records[0].dead_until, 1000 + core::SchedulerConfig{}.minimal_backoff_time);
    EXPECT_EQ(loaded.records[0].dead_reason, "delivery temporarily suspended: " + refused.reason);
}

TEST_F(DestinationStateTest, LearnedLimitsAreWrittenAndForgotten) {
    start();
    const DestinationState::LearnedReply limit{"connection_limit", "4.7.0",
                                               "421 4.7.0 too many connections"};
    ds->learned_changed({"smtp", "a.example"}, {3, 0}, limit);
    ds->learned_changed({"smtp", "b.example"}, {0, 4}, {});
    ds->learned_changed({"retry", "x"}, {1, 0}, {}); // not a destination
    clock.t = 1010;
    // Forgotten: the reply goes too, whatever the caller passes.
    ds->learned_changed({"smtp", "b.example"}, {}, limit);
    auto s = stored();
    ASSERT_TRUE(s.contains("smtp a.example"));
    EXPECT_EQ(s.at("smtp a.example").learned_concurrency, 3);
    EXPECT_EQ(s.at("smtp a.example").learned_rate_delay, 0);
    EXPECT_EQ(s.at("smtp a.example").learned_at, 1000);
    EXPECT_EQ(s.at("smtp a.example").learned_class, "connection_limit");
    EXPECT_EQ(s.at("smtp a.example").learned_reason, "421 4.7.0 too many connections");
    ASSERT_TRUE(s.contains("smtp b.example"));
    EXPECT_EQ(s.at("smtp b.example").learned_rate_delay, 0);
    EXPECT_EQ(s.at("smtp b.example").learned_at, 0);
    EXPECT_EQ(s.at("smtp b.example").learned_class, "");
    EXPECT_EQ(s.at("smtp b.example").updated_at, 1010);
    EXPECT_FALSE(s.contains("retry x"));
}

TEST_F(DestinationStateTest, LearnedLimitsAreOfferedAtRestore) {
    auto rec = [](std::string dest, int concurrency, int rate_delay, int64_t at) {
        state::DestinationRecord r = record(dest);
        r.learned_concurrency = concurrency;
        r.learned_rate_delay = rate_delay;
        r.learned_at = at;
        return r;
    };
    state::DestinationRecord a = rec("a.example", 3, 0, 900);
    a.learned_class = "connection_limit";
    a.learned_status = "4.7.0";
    a.learned_reason = "421 4.7.0 too many connections";
    state::DestinationRecord b = rec("b.example", 0, 5, 950);
    b.learned_class = "rate_limit";
    put({a, b, rec("c.example", 0, 0, 0)});
    std::map<std::string, std::pair<core::LearnedLimit, int64_t>> offered;
    DestinationState::LearnedReply reply_a;
    start([&](const core::AdminTarget& t, const core::LearnedLimit& l, int64_t at,
              const DestinationState::LearnedReply& reply) {
        offered[t.text()] = {l, at};
        if (t.queue == "a.example") reply_a = reply;
        return t.queue == "a.example"; // b is not taken up
    });
    EXPECT_EQ(reply_a.cls, "connection_limit");
    EXPECT_EQ(reply_a.status, "4.7.0");
    EXPECT_EQ(reply_a.text, "421 4.7.0 too many connections");
    ASSERT_EQ(offered.size(), 2u);
    EXPECT_EQ(offered.at("smtp:a.example"), std::make_pair(core::LearnedLimit{3, 0}, int64_t{900}));
    EXPECT_EQ(offered.at("smtp:b.example"), std::make_pair(core::LearnedLimit{0, 5}, int64_t{950}));
    // What was not taken up is dropped with the record's next write.
    EXPECT_EQ(ds->records().at(state::record_key("smtp", "b.example")).record.learned_at, 0);
    EXPECT_EQ(ds->records().at(state::record_key("smtp", "a.example")).record.learned_at, 900);
    message("B", 1, "b.example");
    ds->queue_changed(*sched->transport("smtp").queue_by_name.at("b.example"));
    auto s = stored();
    EXPECT_EQ(s.at("smtp a.example").learned_concurrency, 3);
    EXPECT_EQ(s.at("smtp b.example").learned_rate_delay, 0);
    EXPECT_EQ(s.at("smtp b.example").learned_class, "");
    EXPECT_EQ(s.at("smtp a.example").learned_class, "connection_limit");
}

TEST_F(DestinationStateTest, RestoreBringsBackDeathsAndWindows) {
    auto rec = [](std::string dest, int window, int64_t dead_until, int64_t updated = 990) {
        state::DestinationRecord r = record(dest, updated);
        r.window = window;
        if (dead_until) {
            r.dead_until = dead_until;
            r.dead_status = "4.4.1";
            r.dead_reason = "delivery temporarily suspended: refused";
        }
        return r;
    };
    clock.t = 100000;
    put({rec("dead.example", 0, 100100, 99900), rec("was-dead.example", 0, 99990, 99700),
         rec("big.example", 7, 0, 99000), rec("huge.example", 50, 0, 99000),
         rec("old.example", 9, 0, 100000 - 86400 - 1)});
    start();
    core::Transport& t = sched->transport("smtp");
    // Dead until its time, with its reason; its mail goes to retry.
    ASSERT_TRUE(t.queue_by_name.contains("dead.example"));
    const core::Queue& dead = *t.queue_by_name.at("dead.example");
    EXPECT_TRUE(dead.dead());
    EXPECT_EQ(dead.timer_due, 100100);
    EXPECT_EQ(dead.dsn->reason, "delivery temporarily suspended: refused");
    EXPECT_EQ(sched->queue_for(t, "dead.example", "dead.example").transport->name, "retry");
    // A death that is over is not restored; nor is its window.
    EXPECT_FALSE(t.queue_by_name.contains("was-dead.example"));
    EXPECT_EQ(sched->queue_for(t, "was-dead.example", "was-dead.example").window, 1);
    // Healthy destinations start at their windows, within the limit.
    EXPECT_EQ(sched->queue_for(t, "big.example", "big.example").window, 7);
    EXPECT_EQ(sched->queue_for(t, "huge.example", "huge.example").window, 10);
    // Records past the horizon are forgotten, and deleted.
    EXPECT_EQ(sched->queue_for(t, "old.example", "old.example").window, 1);
    EXPECT_FALSE(stored().contains("smtp old.example"));
}

TEST_F(DestinationStateTest, UnchangedRestoredRecordsStayInTheStore) {
    state::DestinationRecord r;
    r.transport = "smtp";
    r.destination = "dead.example";
    r.dead_until = 1100;
    r.dead_status = "4.4.1";
    r.dead_reason = "delivery temporarily suspended: refused";
    r.updated_at = 990;
    put({r});
    start();
    auto s = stored();
    ASSERT_TRUE(s.contains("smtp dead.example"));
    EXPECT_EQ(s.at("smtp dead.example").dead_until, 1100);
}

} // namespace

// By hand: what the event loop spends on the state for 1,000 destinations
// changing once each (the feedback calls, then the hand-over of one batch).
// Run with --gtest_also_run_disabled_tests --gtest_filter='*Bench*'.
TEST_F(DestinationStateTest, DISABLED_BenchLoopCost) {
    start();
    core::Transport& t = sched->transport("smtp");
    std::vector<const core::Queue*> queues;
    for (int i = 0; i < 1000; ++i) {
        std::string name = "mx" + std::to_string(i) + ".example";
        queues.push_back(&sched->queue_for(t, name, name));
    }
    using C = std::chrono::steady_clock;
    for (int round = 0; round < 5; ++round) {
        auto t0 = C::now();
        for (const core::Queue* q : queues)
            ds->queue_changed(*q);
        auto t1 = C::now();
        ds->flush();
        auto t2 = C::now();
        ds->drain();
        auto t3 = C::now();
        auto us = [](auto d) {
            return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
        };
        std::printf("1000 changes: %lld us; hand-over: %lld us; commit on the writer: %lld us\n",
                    static_cast<long long>(us(t1 - t0)), static_cast<long long>(us(t2 - t1)),
                    static_cast<long long>(us(t3 - t2)));
    }
}

TEST_F(DestinationStateTest, IdleRecordsLeaveMemoryButNotTheStore) {
    start();
    message("A", 1, "gone.example");
    deliver_all({"2.0.0", "250 ok"});
    message("B", 1, "busy.example"); // its queue stays
    ds->queue_changed(*sched->transport("smtp").queue_by_name.at("busy.example"));
    ds->flush();
    ds->drain();
    clock.t += 601;
    ds->forget_idle(600);
    EXPECT_FALSE(ds->records().contains(state::record_key("smtp", "gone.example")));
    EXPECT_TRUE(ds->records().contains(state::record_key("smtp", "busy.example")));
    EXPECT_TRUE(stored().contains("smtp gone.example"));
}

TEST_F(DestinationStateTest, StaleRecordsAreExpiredWhileRunningButNotDeadOnes) {
    put({record("old.example", 990)});
    start();
    message("A", 1, "x.example");
    deliver_all({"2.0.0", "ok"});
    ds->flush();
    ds->drain();
    // More than a day and an hour later: the store loses what has not
    // changed since, but a destination dead now stays.
    clock.t = 1000 + 86400 + StateWriter::expiry_interval + 10;
    sched->set_time(clock.t);
    message("B", 2, "down.example");
    deliver_all(refused, 1);
    message("C", 1, "y.example");
    deliver_all({"2.0.0", "ok"});
    ds->flush();
    auto s = stored();
    EXPECT_FALSE(s.contains("smtp old.example"));
    EXPECT_FALSE(s.contains("smtp x.example"));
    EXPECT_TRUE(s.contains("smtp y.example"));
    ASSERT_TRUE(s.contains("smtp down.example"));
    EXPECT_GT(s.at("smtp down.example").dead_until, clock.t);
}

TEST_F(DestinationStateTest, AStoreReplacedWhileRunningGetsEveryRecordInMemoryAgain) {
    start();
    message("A", 1, "a.example");
    message("B", 1, "b.example");
    message("C", 2, "down.example");
    deliver_all({"2.0.0", "ok"});
    ds->flush();
    ds->drain();
    // The file is cut under the running writer; the next commit finds it
    // damaged, the store replaces it, and the loop hands everything over.
    fs::resize_file(path, 8192);
    clock.t += 5;
    message("D", 1, "d.example");
    deliver_all(refused, 1);
    ds->drain();
    io.poll(); // the writer posted the hand-over
    ds->drain();
    EXPECT_TRUE(fs::exists(path + ".corrupt"));
    auto s = stored();
    for (const char* d : {"a.example", "b.example", "d.example"})
        EXPECT_TRUE(s.contains(std::string("smtp ") + d)) << d;
}
