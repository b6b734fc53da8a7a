// What the control socket's query tests share: a real scheduler core
// driven by the core tests' scripted driver, the active queue's messages
// and the record of deliveries, with helpers that add mail, hand entries
// to an "agent" and report its replies.
#pragma once

#include "arrival_index.hpp"
#include "clock.hpp"
#include "counters.hpp"
#include "delivery_record.hpp"
#include "fake_driver.hpp"
#include "message_table.hpp"

#include <gtest/gtest.h>
#include <map>
#include <memory>

namespace cqmgr::qmgr::test {

struct FixedClock final : WallClock {
    protocol::TimeVal t{1000, 0};
    int64_t now() const override { return t.sec; }
    protocol::TimeVal precise() const override { return t; }
};

struct ControlFixture : ::testing::Test {
    core::test::FakeDriver drv;
    core::TransportConfig tc;
    std::unique_ptr<core::Scheduler> sched;
    FixedClock clock;
    MessageTable messages;
    ArrivalIndex arrivals;
    std::unique_ptr<DeliveryRecord> record;
    // What each delivery in flight holds for the record, by entry.
    std::map<const core::Entry*, DeliveryRecord::InFlight> flights;
    Counters counters;

    // A new scheduler with the settings `tc`, at time 1000, and its record.
    void make_core() {
        sched = std::make_unique<core::Scheduler>(
            core::SchedulerConfig{}, [this](const std::string&) { return tc; }, drv);
        drv.sched = sched.get();
        drv.free_on_done = false;
        sched->set_time(1000);
        record = std::make_unique<DeliveryRecord>(*sched);
    }
    // A message with `n` recipients for `queue` on `transport`, arrived at
    // `arrival` (Unix seconds), of sender group `group`.
    Message& add(const std::string& id, int n, const std::string& queue,
                 const std::string& transport = "smtp", int64_t arrival = 900,
                 core::SenderGroup group = 0) {
        auto m = std::make_unique<Message>();
        m->id = id;
        m->sender_group = group;
        m->env.arrival_sec = arrival;
        m->active_arrival = {arrival + 10, 0};
        m->phase = Message::Phase::waiting;
        sched->message_add(*m);
        core::Transport& t = sched->transport(transport);
        for (int i = 0; i < n; ++i)
            sched->assign(*m, sched->queue_for(t, queue, queue),
                          core::test::rcpt(id + "-" + std::to_string(i) + "@" + queue));
        sched->batch_done(*m, false, 0);
        Message& ref = messages.add(std::move(m));
        arrivals.add(ref);
        return ref;
    }
    // Hands the next entry of `transport` to an "agent" now.
    core::Entry* send(const std::string& transport = "smtp") {
        core::Entry* e = sched->select_entry(sched->transport(transport));
        if (e) record->started(flights[e], *e, clock);
        return e;
    }
    // The agent's reply for `e`.
    void reply(core::Entry* e, int status, core::Dsn hop = {}) {
        record->finished(flights[e], hop, clock);
        flights.erase(e);
        sched->delivery_done(e, {core::DeliveryResult::Kind::replied, status, hop});
    }
};

} // namespace cqmgr::qmgr::test
