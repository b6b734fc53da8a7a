// The adaptive limits between the delivery path and a real scheduler core
// (the core tests' scripted driver): a 421 hop status teaches the queue a
// concurrency cap, with its cause; recipients deferred one by one teach
// through the records their delivery added to a real defer log file (not
// those other deliveries added); a new queue gets a slow start's cap, with
// no cause; transports not listed learn nothing.
// (The daemon calls these from the delivery path: scenarios adaptive-421
// and adaptive-rate-limit.)
#include "adaptive.hpp"
#include "fake_driver.hpp"
#include "test_params.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace cqmgr;
using namespace cqmgr::qmgr;
using cqmgr::qmgr::testing::params;

namespace {

struct Adaptive : ::testing::Test {
    core::test::FakeDriver drv;
    std::unique_ptr<core::Scheduler> sched;
    std::vector<std::unique_ptr<core::Message>> msgs;
    std::string log_path;
    std::unique_ptr<AdaptiveLimits> adaptive;

    // Recipients per entry.
    virtual int recipient_limit() const { return 1; }
    // main.cf.
    virtual std::string main_cf() const { return "cqmgr_adaptive_limit_transports = smtp\n"; }

    void SetUp() override {
        core::TransportConfig tc;
        tc.dest_recipient_limit = recipient_limit();
        sched = std::make_unique<core::Scheduler>(
            core::SchedulerConfig{}, [tc](const std::string&) { return tc; }, drv);
        drv.sched = sched.get();
        sched->set_time(1000);
        char path[] = "/tmp/adaptive_defer_XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        log_path = path;
        adaptive =
            std::make_unique<AdaptiveLimits>(params(main_cf()), std::nullopt, *sched,
                                             [this](const std::string&) { return log_path; });
    }
    void TearDown() override { std::remove(log_path.c_str()); }

    // Message "M" with `n` recipients (offsets 100, 200, ...) for d.example
    // on `transport`; returns its first `k` entries, selected.
    std::vector<core::Entry*> select(int n, int k, const std::string& transport = "smtp") {
        auto m = std::make_unique<core::Message>();
        m->id = "M";
        sched->message_add(*m);
        core::Transport& t = sched->transport(transport);
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
    // Appends a defer log record for the recipient at `offset`.
    void defer_record(int64_t offset, const std::string& status, const std::string& reason) {
        std::ofstream(log_path, std::ios::app)
            << "\nrecipient=x@d.example\noffset=" << offset << "\nstatus=" << status
            << "\naction=delayed\nreason=" << reason << "\n\n";
    }
};

const core::AdminTarget smtp_d{"smtp", "d.example"};

// Entries of up to 50 recipients.
struct AdaptiveBatch : Adaptive {
    int recipient_limit() const override { return 50; }
};

// The window model (cqmgr_adaptive_rate_model = window).
struct AdaptiveWindowed : Adaptive {
    std::string main_cf() const override {
        return "cqmgr_adaptive_limit_transports = smtp\ncqmgr_adaptive_rate_model = window\n";
    }
};

} // namespace

TEST_F(Adaptive, A421AtTheGreetingCapsTheQueue) {
    auto busy = select(10, 5);
    core::Queue& q = *busy[0]->queue;
    EXPECT_TRUE(adaptive->covers(*q.transport));
    core::DeliveryResult r{core::DeliveryResult::Kind::replied,
                           -1,
                           {"4.7.0", "host mx[192.0.2.1] refused to talk to me: 421 4.7.0 Error: "
                                     "too many connections from 192.0.2.9"}};
    adaptive->delivered(*busy[4], 5, r, 1'000'000, 0);
    EXPECT_EQ(q.limits.learned, (core::LearnedLimit{4, 0}));
    EXPECT_EQ(sched->limits().learned().at(smtp_d), (core::LearnedLimit{4, 0}));
    const AdaptiveLimits::Cause* c = adaptive->cause(q);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->cls, ReplyClass::connection_limit);
    EXPECT_EQ(c->status, "4.7.0");
    EXPECT_EQ(c->when, 1000);
    sched->delivery_done(busy[4], r);
    sched->check_invariants();
    // A success or a crash teaches nothing new.
    adaptive->delivered(*busy[0], 4, core::DeliveryResult{}, 1'000'500, 0);
    adaptive->delivered(*busy[1], 4,
                        core::DeliveryResult{core::DeliveryResult::Kind::crashed, 0, {}}, 1'000'600,
                        0);
    EXPECT_EQ(q.limits.learned, (core::LearnedLimit{4, 0}));
}

TEST_F(Adaptive, ANewQueueGetsASlowStartCapWithoutACause) {
    auto busy = select(10, 5);
    core::Queue& q = *busy[0]->queue;
    for (int i = 0; i < 5; ++i)
        adaptive->started(*busy[i], i + 1, 1'000'000);
    EXPECT_FALSE(q.limits.learned.any());
    // The 5th at once succeeded: one more may go.
    adaptive->delivered(*busy[4], 5, core::DeliveryResult{}, 1'001'000, 0);
    EXPECT_EQ(q.limits.learned, (core::LearnedLimit{6, 0}));
    EXPECT_TRUE(adaptive->slow_start(q));
    EXPECT_FALSE(adaptive->cause(q));
    sched->delivery_done(busy[4], core::DeliveryResult{});
    sched->check_invariants();
}

TEST_F(Adaptive, RecipientDeferralsTeachThroughTheDeferLog) {
    auto busy = select(4, 2);
    core::Queue& q = *busy[0]->queue;
    defer_record(100, "4.0.0", "an earlier attempt's record"); // before the mark
    int64_t mark = adaptive->defer_log_mark("M");
    EXPECT_GT(mark, 0);
    // Another delivery's record (offset 200: it would be a connection
    // limit), then ours (offset 100).
    defer_record(200, "4.7.0", "host mx said: 421 4.7.0 too many connections");
    defer_record(100, "4.7.1",
                 "host mx[192.0.2.1] said: 450 4.7.1 Error: too much mail from 192.0.2.9 (in "
                 "reply to MAIL FROM command)");
    core::DeliveryResult r{core::DeliveryResult::Kind::replied, -1, {}};
    ASSERT_EQ(busy[0]->rcpts[0].offset(), 100);
    EXPECT_TRUE(adaptive->delivered(*busy[0], 2, r, 2'000'000, mark)); // the receiver saw it
    // Two at once were too many: one at a time.
    EXPECT_EQ(q.limits.learned, (core::LearnedLimit{1, 0}));
    const AdaptiveLimits::Cause* c = adaptive->cause(q);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->cls, ReplyClass::rate_limit);
    EXPECT_EQ(c->status, "4.7.1");
    sched->delivery_done(busy[0], r);
    sched->check_invariants();
}

TEST_F(AdaptiveBatch, ARepeatedReplyIsMatchedOnce) {
    // A receiver refuses each of 20 recipients with the same 2 KB text made
    // to defeat a backtracking rule, and a 21st with a rate limit.
    auto busy = select(21, 1);
    ASSERT_EQ(busy[0]->rcpts.size(), 21u);
    int64_t mark = adaptive->defer_log_mark("M");
    std::string crafted = "host mx[192.0.2.1] said: 450 4.2.0 ";
    while (crafted.size() < 2048)
        crafted += "4.2.0 try ";
    for (int i = 0; i < 20; ++i)
        defer_record(100 * (i + 1), "4.2.0", crafted + " (in reply to RCPT TO command)");
    defer_record(2100, "4.7.1", "host mx[192.0.2.1] said: 450 4.7.1 Error: too much mail from x");
    core::DeliveryResult r{core::DeliveryResult::Kind::replied, -1, {}};
    adaptive->delivered(*busy[0], 1, r, 2'000'000, mark);
    EXPECT_EQ(adaptive->classifier().matched(), 2u);
    const AdaptiveLimits::Cause* c = adaptive->cause(*busy[0]->queue);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->cls, ReplyClass::rate_limit);
    sched->delivery_done(busy[0], r);
    sched->check_invariants();
}

// A deferral without a hop status or a record of its own: the agent took
// no recipient in hand (as when postsuper -r moved the queue file away),
// so no receiver saw the delivery.  A crash or a success may have been.
TEST_F(Adaptive, DeferralsWithoutWordsTeachNothingAndWereUnseen) {
    auto busy = select(4, 4);
    core::DeliveryResult r{core::DeliveryResult::Kind::replied, -1, {}};
    EXPECT_FALSE(adaptive->delivered(*busy[0], 1, r, 1'000'000, adaptive->defer_log_mark("M")));
    EXPECT_FALSE(busy[0]->queue->limits.learned.any());
    EXPECT_TRUE(sched->limits().learned().empty());
    core::DeliveryResult crashed{core::DeliveryResult::Kind::crashed, 0, {}};
    EXPECT_TRUE(adaptive->delivered(*busy[1], 1, crashed, 1'000'100, 0));
    EXPECT_TRUE(adaptive->delivered(*busy[2], 1, core::DeliveryResult{}, 1'000'200, 0));
    core::DeliveryResult hop{core::DeliveryResult::Kind::replied, -1, {"4.4.1", ""}};
    EXPECT_TRUE(adaptive->delivered(*busy[3], 1, hop, 1'000'300, adaptive->defer_log_mark("M")));
}

TEST_F(Adaptive, OnlyListedTransportsAreCovered) {
    auto busy = select(1, 1, "relay");
    EXPECT_FALSE(adaptive->covers(*busy[0]->queue->transport));
}

TEST_F(Adaptive, LimitsKeptFromAnEarlierRunAreTakenUpAndForgotten) {
    std::vector<std::pair<core::AdminTarget, core::LearnedLimit>> told;
    adaptive->observe([&](const core::AdminTarget& t, const core::LearnedLimit& l,
                          const AdaptiveLimits::Cause*) { told.emplace_back(t, l); });
    // Learned 100 s before now (1,000,000 ms), forgotten after an hour.
    AdaptiveLimits::Cause why{ReplyClass::rate_limit, "4.7.0", "421 4.7.0 slow down", 900};
    EXPECT_TRUE(adaptive->restore(smtp_d, {3, 2}, 900, 1'000'000, why));
    EXPECT_EQ(sched->limits().learned().at(smtp_d), (core::LearnedLimit{3, 2}));
    // The queue made later has it, and the reply that taught it.
    auto busy = select(2, 1);
    EXPECT_EQ(busy[0]->queue->limits.learned, (core::LearnedLimit{3, 2}));
    const AdaptiveLimits::Cause* cause = adaptive->cause(*busy[0]->queue);
    ASSERT_NE(cause, nullptr);
    EXPECT_EQ(cause->cls, ReplyClass::rate_limit);
    EXPECT_EQ(cause->text, "421 4.7.0 slow down");
    EXPECT_TRUE(told.empty()); // nothing changed
    // Transports that learn nothing now, limits past their time, and empty
    // limits are not taken up.
    EXPECT_FALSE(adaptive->restore({"relay", "d.example"}, {3, 0}, 900, 1'000'000));
    EXPECT_FALSE(adaptive->restore({"smtp", "old.example"}, {3, 0}, 1000 - 3600, 1'000'000));
    EXPECT_FALSE(adaptive->restore({"smtp", "none.example"}, {}, 900, 1'000'000));
    EXPECT_EQ(sched->limits().learned().size(), 1u);
    // An hour after it was learned it is forgotten, and the observer told.
    adaptive->sweep(900'000 + 3'599'000);
    EXPECT_TRUE(told.empty());
    adaptive->sweep(900'000 + 3'600'000);
    ASSERT_EQ(told.size(), 1u);
    EXPECT_EQ(told[0].first, smtp_d);
    EXPECT_FALSE(told[0].second.any());
    EXPECT_TRUE(sched->limits().learned().empty());
}

TEST_F(Adaptive, ChangesAreToldToTheObserver) {
    std::vector<core::LearnedLimit> told;
    adaptive->observe([&](const core::AdminTarget& t, const core::LearnedLimit& l,
                          const AdaptiveLimits::Cause* cause) {
        EXPECT_EQ(t, smtp_d);
        told.push_back(l);
        ASSERT_NE(cause, nullptr);
        EXPECT_EQ(cause->cls, ReplyClass::connection_limit);
        EXPECT_EQ(cause->status, "4.7.0");
    });
    auto busy = select(10, 5);
    core::DeliveryResult r{core::DeliveryResult::Kind::replied,
                           -1,
                           {"4.7.0", "host mx[192.0.2.1] refused to talk to me: 421 4.7.0 Error: "
                                     "too many connections from 192.0.2.9"}};
    adaptive->delivered(*busy[4], 5, r, 1'000'000, 0);
    ASSERT_EQ(told.size(), 1u);
    EXPECT_EQ(told[0], (core::LearnedLimit{4, 0}));
    sched->delivery_done(busy[4], r);
}

// The window model through the scheduler: a rate-limit refusal teaches the
// window's successes as a quota, kept with its reply, and the queue is held
// (nothing selected) until the window ends; the next window's first
// delivery goes alone.  A quota kept from an earlier run is taken up only
// with the window model on.
TEST_F(AdaptiveWindowed, ARateLimitTeachesAQuotaAndHoldsTheQueueToTheWindowsEnd) {
    std::vector<core::LearnedLimit> told;
    adaptive->observe([&](const core::AdminTarget&, const core::LearnedLimit& l,
                          const AdaptiveLimits::Cause*) { told.push_back(l); });
    auto busy = select(10, 3);
    core::Queue& q = *busy[0]->queue;
    for (int i = 0; i < 3; ++i)
        adaptive->started(*busy[i], i + 1, 1'000'000);
    for (int i = 0; i < 2; ++i) {
        adaptive->delivered(*busy[i], i + 1, core::DeliveryResult{}, 1'000'100, 0, 1'000'000);
        sched->delivery_done(busy[i], core::DeliveryResult{});
    }
    int64_t mark = adaptive->defer_log_mark("M");
    defer_record(busy[2]->rcpts[0].offset(), "4.7.1",
                 "host mx[192.0.2.1] said: 450 4.7.1 Error: too much mail from 192.0.2.9 (in "
                 "reply to MAIL FROM command)");
    core::DeliveryResult r{core::DeliveryResult::Kind::replied, -1, {}};
    adaptive->delivered(*busy[2], 3, r, 1'000'200, mark, 1'000'000);
    // The pace learned nothing (its slow start goes on: one above the 2
    // that succeeded at once); the window a quota of 2 per 61 s, held
    // until 61 s after the second of the first delivery's end.
    EXPECT_TRUE(adaptive->slow_start(q));
    EXPECT_EQ(q.limits.learned.concurrency, 3);
    EXPECT_EQ(q.limits.learned.rate_delay, 0);
    EXPECT_EQ(q.limits.learned.quota, 2);
    EXPECT_EQ(q.limits.learned.window, 61);
    EXPECT_EQ(q.limits.learned.held_until, 1000 + 61);
    ASSERT_NE(adaptive->cause(q), nullptr);
    EXPECT_EQ(adaptive->cause(q)->cls, ReplyClass::rate_limit);
    ASSERT_FALSE(told.empty());
    EXPECT_EQ(told.back(), (core::LearnedLimit{0, 0, 2, 61, 0})); // no hold kept
    sched->delivery_done(busy[2], r);
    core::Transport& t = *q.transport;
    EXPECT_EQ(sched->select_entry(t), nullptr);
    sched->check_invariants();
    // The window is over: the next delivery goes alone.
    sched->set_time(1061);
    EXPECT_EQ(q.limits.learned.held_until, 0);
    core::Entry* e = sched->select_entry(t);
    ASSERT_TRUE(e);
    adaptive->started(*e, 1, 1'061'010);
    EXPECT_EQ(q.limits.learned.concurrency, 1);
    EXPECT_EQ(sched->select_entry(t), nullptr);
    adaptive->delivered(*e, 1, core::DeliveryResult{}, 1'061'050, 0, 1'061'010);
    EXPECT_EQ(q.limits.learned.concurrency, 3);
    sched->delivery_done(e, core::DeliveryResult{});
    sched->check_invariants();
    // Kept from an earlier run.
    const core::AdminTarget other{"smtp", "o.example"};
    EXPECT_TRUE(adaptive->restore(other, {0, 0, 7, 61}, 900, 1'061'000));
    EXPECT_EQ(sched->limits().learned().at(other), (core::LearnedLimit{0, 0, 7, 61, 0}));
}

TEST_F(Adaptive, AQuotaIsNotTakenUpWithoutTheWindowModel) {
    EXPECT_FALSE(adaptive->restore(smtp_d, {0, 0, 7, 61}, 900, 1'000'000));
    EXPECT_TRUE(adaptive->restore(smtp_d, {3, 0, 7, 61}, 900, 1'000'000));
    EXPECT_EQ(sched->limits().learned().at(smtp_d), (core::LearnedLimit{3, 0}));
}
