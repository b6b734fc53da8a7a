// The preemption sequences of docs/postfix-facts.md §10.4: a
// ten-recipient message followed by two two-recipient messages, slot cost 2.
#include "fake_driver.hpp"

#include <gtest/gtest.h>

using namespace cqmgr::core;
using namespace cqmgr::core::test;

namespace {

// Runs the example and returns the delivery sequence as job numbers.
std::string run_sequence(int loan, int discount) {
    FakeDriver drv;
    SchedulerConfig cfg;
    Scheduler s(
        cfg,
        [&](const std::string&) {
            TransportConfig tc = unlimited_single_rcpt(2);
            tc.slot_loan = loan;
            tc.slot_discount = discount;
            tc.min_slots = 3;
            return tc;
        },
        drv);
    drv.sched = &s;
    s.set_time(1000);
    std::vector<std::unique_ptr<Message>> msgs;
    Transport& t = s.transport("smtp");
    int sizes[] = {10, 2, 2};
    for (int i = 0; i < 3; ++i) {
        auto m = std::make_unique<Message>();
        m->id = std::to_string(i + 1);
        s.message_add(*m);
        Queue& q = s.queue_for(t, "dest.example", "dest.example");
        for (int r = 0; r < sizes[i]; ++r)
            s.assign(*m, q, rcpt("r" + std::to_string(r) + "@m" + m->id));
        s.batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
    }
    std::string seq;
    while (Entry* e = s.select_entry(t)) {
        seq += e->message->id;
        s.delivery_done(e, DeliveryResult{});
        s.check_invariants();
    }
    return seq;
}

} // namespace

TEST(Preemption, WithoutLoan) {
    EXPECT_EQ(run_sequence(0, 0), "11112211113311");
}

TEST(Preemption, WithFiftyPercentDiscount) {
    EXPECT_EQ(run_sequence(0, 50), "11221111331111");
}

TEST(Preemption, DisabledBelowSlotCostTwo) {
    // With preemption off, plain FIFO.
    FakeDriver drv;
    Scheduler s(
        {}, [](const std::string&) { return unlimited_single_rcpt(1); }, drv);
    drv.sched = &s;
    Transport& t = s.transport("smtp");
    std::vector<std::unique_ptr<Message>> msgs;
    for (int i = 0; i < 2; ++i) {
        auto m = std::make_unique<Message>();
        m->id = std::to_string(i + 1);
        s.message_add(*m);
        for (int r = 0; r < (i == 0 ? 8 : 1); ++r)
            s.assign(*m, s.queue_for(t, "d", "d"), rcpt("r" + std::to_string(r)));
        s.batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
    }
    std::string seq;
    while (Entry* e = s.select_entry(t)) {
        seq += e->message->id;
        s.delivery_done(e, DeliveryResult{});
    }
    EXPECT_EQ(seq, "111111112");
}
