// The core's re-entry check (driver_calls.hpp): a driver that calls back
// into the scheduler from inside a notification is stopped with a panic,
// Scheduler::in_callback() tells it where it is, and the requests it may
// answer at once (a refill, a message's end) still may.
#include "scheduler_fixture.hpp"

#include <functional>

namespace cqmgr::core::test {
namespace {

// A scripted driver that runs `on_window` inside each queue_window() and
// `on_wakeup` inside each wakeup().
struct HookDriver : FakeDriver {
    std::function<void(const Queue&)> on_window;
    std::function<void()> on_wakeup;
    void queue_window(const Queue& q, bool) override {
        if (on_window) on_window(q);
    }
    void wakeup() override {
        FakeDriver::wakeup();
        if (on_wakeup) on_wakeup();
    }
};

struct Reentry : ::testing::Test {
    HookDriver drv;
    TransportConfig tc;
    std::unique_ptr<Scheduler> s;
    std::unique_ptr<Message> m;

    // A scheduler, and message "A" with one recipient for d.example.
    void make() {
        tc.dest_recipient_limit = 1;
        s = std::make_unique<Scheduler>(
            SchedulerConfig{}, [this](const std::string&) { return tc; }, drv);
        drv.sched = s.get();
        s->set_time(1000);
        m = std::make_unique<Message>();
        m->id = "A";
        s->message_add(*m);
        Transport& t = s->transport("smtp");
        s->assign(*m, s->queue_for(t, "d.example", "d.example"), rcpt("a@d.example"));
        s->batch_done(*m, false, 0);
    }
    // A's entry, selected and delivered.
    void deliver() {
        Transport& t = s->transport("smtp");
        Entry* e = s->select_entry(t);
        ASSERT_NE(e, nullptr);
        s->delivery_done(e, DeliveryResult{DeliveryResult::Kind::replied, 0, {}});
    }
};

using ReentryDeathTest = Reentry;

} // namespace

TEST_F(Reentry, InCallbackIsTrueOnlyInsideANotification) {
    make();
    std::vector<bool> inside;
    drv.on_window = [&](const Queue&) { inside.push_back(s->in_callback()); };
    drv.on_wakeup = [&] { inside.push_back(s->in_callback()); };
    EXPECT_FALSE(s->in_callback());
    deliver();
    ASSERT_FALSE(inside.empty());
    for (bool b : inside)
        EXPECT_TRUE(b);
    EXPECT_FALSE(s->in_callback());
    // Reading is allowed from inside: only changes are refused.
    drv.on_window = [&](const Queue& q) { EXPECT_EQ(s->find_queue("smtp", q.name), &q); };
    make();
    deliver();
}

TEST_F(ReentryDeathTest, AChangeFromInsideANotificationPanics) {
    make();
    drv.on_window = [&](const Queue& q) {
        s->set_limit(AdminTarget{"smtp", q.name}, LimitChange::share(1));
    };
    EXPECT_DEATH(deliver(), "set_limit called from inside a driver callback");
}

TEST_F(ReentryDeathTest, ATimeStepFromInsideAWakeupPanics) {
    make();
    drv.on_wakeup = [&] { s->set_time(2000); };
    EXPECT_DEATH(deliver(), "set_time called from inside a driver callback");
}

TEST_F(Reentry, ARefillAndAMessageEndMayBeAnsweredAtOnce) {
    // FakeDriver reads (assign, batch_done) inside refill() and frees the
    // message inside message_done(): requests, not notifications.
    make();
    deliver();
    EXPECT_EQ(drv.done, std::vector<std::string>{"A"});
    s->check_invariants();
}

} // namespace cqmgr::core::test
