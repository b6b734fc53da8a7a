// The fixture of the scheduler tests: a scheduler with one transport
// configuration for every transport (the retry transport without a
// concurrency limit), a scripted driver and a fake clock at 1000.
#pragma once

#include "fake_driver.hpp"

#include <gtest/gtest.h>
#include <memory>

namespace cqmgr::core::test {

struct Fixture : ::testing::Test {
    FakeDriver drv;
    TransportConfig tc;
    SchedulerConfig cfg;
    std::unique_ptr<Scheduler> s;
    std::vector<std::unique_ptr<Message>> msgs;

    void make() {
        s = std::make_unique<Scheduler>(
            cfg,
            [this](const std::string& name) {
                TransportConfig c = tc;
                if (name == "retry") c.dest_concurrency_limit = 0;
                return c;
            },
            drv);
        drv.sched = s.get();
        s->set_time(1000);
    }
    // make() with one-recipient entries and a window of `window` from the
    // start, the preemption index checked (the sender limits' tests).
    void make_wide(int window) {
        tc.dest_recipient_limit = 1;
        tc.dest_concurrency_limit = window;
        tc.init_dest_concurrency = window;
        cfg.verify_candidates = true;
        make();
    }
    // A message with `n` recipients for `queue` on `transport`, in `lane`,
    // of sender group `group`.
    Message& message(const std::string& id, int n, const std::string& queue = "d.example",
                     const std::string& transport = "smtp", Lane lane = Lane::normal,
                     SenderGroup group = 0) {
        auto m = std::make_unique<Message>();
        m->id = id;
        m->lane = lane;
        m->sender_group = group;
        s->message_add(*m);
        Transport& t = s->transport(transport);
        for (int i = 0; i < n; ++i)
            s->assign(*m, s->queue_for(t, queue, queue),
                      rcpt(id + "-" + std::to_string(i) + "@" + queue));
        s->batch_done(*m, false, 0);
        msgs.push_back(std::move(m));
        return *msgs.back();
    }
    // A message of sender group `group` (0: none) with `n` recipients for
    // `queue` on `transport` (the sender limits' and rules' tests).
    Message& sent(const std::string& id, SenderGroup group, int n = 1,
                  const std::string& queue = "d.example", const std::string& transport = "smtp") {
        return message(id, n, queue, transport, Lane::normal, group);
    }
    // Message `older` of sender group `group`, a second later `younger` of
    // none, and a second after that the next entry of `t`: `younger`'s
    // when the group is stopped, though `older` would preempt first.
    Entry* younger_goes(Transport& t, const std::string& older, SenderGroup group,
                        const std::string& younger) {
        sent(older, group);
        s->set_time(s->now() + 1);
        sent(younger, 0);
        s->set_time(s->now() + 1);
        return s->select_entry(t);
    }
    // How many of `v` are of messages whose id starts with `prefix`.
    static int count(const std::vector<Entry*>& v, char prefix) {
        int n = 0;
        for (Entry* e : v)
            n += e->message->id[0] == prefix;
        return n;
    }
    // Opens connections and selects entries until the scheduler wants no
    // more; returns what was selected.
    std::vector<Entry*> fill() { return fill_up_to(nullptr, 0); }
    // Like fill(), with at most `agents` deliveries of transport `t` in
    // flight: the agents of its process limit (the core counts on the
    // driver for that bound).
    std::vector<Entry*> fill_agents(const std::string& transport, int agents) {
        return fill_up_to(&s->transport(transport), agents);
    }
    // fill(), while `t` (when given) has fewer than `agents` in flight.
    std::vector<Entry*> fill_up_to(const Transport* t, int agents) {
        std::vector<Entry*> out;
        while (!t || in_flight(*t) < agents) {
            Transport* ready = s->select_transport();
            if (!ready) break;
            s->connection_ready(*ready);
            Entry* e = s->select_entry(*ready);
            EXPECT_NE(e, nullptr) << "a connection without a request";
            if (!e) break;
            out.push_back(e);
            s->check_invariants();
        }
        return out;
    }
    static int in_flight(const Transport& t) {
        int n = 0;
        for (int b : t.lane_busy)
            n += b;
        return n;
    }
    // Reports every entry of `busy` for queue `q` delivered, and takes
    // them out of `busy`.
    void deliver_queue(std::vector<Entry*>& busy, const Queue& q) {
        for (auto it = busy.begin(); it != busy.end();)
            if ((*it)->queue == &q) {
                deliver(*it);
                it = busy.erase(it);
            } else {
                ++it;
            }
    }
    // Reports entry `e` delivered.
    void deliver(Entry* e) {
        s->delivery_done(e, DeliveryResult{DeliveryResult::Kind::replied, 0, {}});
        s->check_invariants();
    }
    // Makes the scheduler with one-recipient entries and message "A" (`n`
    // recipients for `queue` on smtp), and selects A's first entry.
    Entry* first_entry_of_a(int n, const std::string& queue) {
        tc.dest_recipient_limit = 1;
        make();
        message("A", n, queue);
        return s->select_entry(s->transport("smtp"));
    }
    // One-recipient entries at concurrency 1, so that the first failure
    // (a whole failed pseudo-cohort) kills `dest`; message "A" has `n`
    // recipients there and its first entry has just failed.
    Message& kill_destination(const std::string& dest, int n) {
        tc.init_dest_concurrency = 1;
        tc.fail_cohort_limit = 1;
        Entry* e = first_entry_of_a(n, dest);
        Message& m = *msgs.back();
        if (!e)
            ADD_FAILURE() << "no entry for " << dest;
        else
            s->delivery_done(
                e, DeliveryResult{DeliveryResult::Kind::replied, -1, {"4.4.1", "connect refused"}});
        return m;
    }
};

} // namespace cqmgr::core::test
