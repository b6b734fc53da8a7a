// A scripted driver for scheduler tests: messages are plain core::Message
// objects, refills come from a per-message list of pending recipients.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::core::test {

struct FakeDriver : Driver {
    Scheduler* sched = nullptr;
    std::vector<std::string> done;     // messages finished, in order
    std::vector<std::string> deferred; // recipients deferred by the driver
    int wakeups = 0;
    // Recipients not yet "read" per message, with their queue.
    struct Pending {
        Queue* queue;
        Recipient rcpt;
    };
    std::map<Message*, std::deque<Pending>> unread;
    bool free_on_done = true;
    // With async_refills, refill() only records the request and
    // finish_refill() completes it later, as the daemon does once the
    // resolver has answered.
    bool async_refills = false;
    std::vector<std::pair<Message*, int>> refill_requests;

    void refill(Message& m, int limit) override {
        if (async_refills)
            refill_requests.emplace_back(&m, limit);
        else
            read(m, limit);
    }
    // Completes the oldest refill request for `m`; false if there is none.
    bool finish_refill(Message& m) {
        for (auto it = refill_requests.begin(); it != refill_requests.end(); ++it)
            if (it->first == &m) {
                int limit = it->second;
                refill_requests.erase(it);
                read(m, limit);
                return true;
            }
        return false;
    }
    // Reads up to `limit` pending recipients of `m` and assigns them.
    void read(Message& m, int limit) {
        auto& q = unread[&m];
        int n = 0;
        while (!q.empty() && n < limit) {
            sched->assign(m, *q.front().queue, q.front().rcpt);
            q.pop_front();
            ++n;
        }
        sched->batch_done(m, !q.empty(), static_cast<int>(q.size()));
    }
    void message_done(Message& m) override {
        done.push_back(m.id);
        if (free_on_done) sched->message_free(m);
    }
    void defer_recipients(Message&, const std::vector<Recipient>& rcpts, const Dsn&) override {
        for (auto& r : rcpts)
            deferred.push_back(std::string(r.address()));
    }
    void wakeup() override { ++wakeups; }
    // The gate a new queue starts with (by queue name), as a driver holding
    // cluster leases or rate tokens would give it.
    std::map<std::string, int> gates;
    std::optional<int> queue_gate(const Queue& q) override {
        auto it = gates.find(q.name);
        if (it == gates.end()) return std::nullopt;
        return it->second;
    }
    // The provider of a new queue (by queue name), as a driver that knows
    // providers (cqmgr_provider_maps) would give it; 0 (none) otherwise.
    std::map<std::string, uint32_t> providers;
    uint32_t queue_provider(const Queue& q) override {
        auto it = providers.find(q.name);
        return it == providers.end() ? 0 : it->second;
    }
    // Administrative settings that ended by themselves, as "hold smtp:d".
    std::vector<std::string> expired;
    void admin_expired(AdminKind kind, const AdminTarget& target) override {
        expired.push_back((kind == AdminKind::hold  ? "hold "
                           : kind == AdminKind::cap ? "cap "
                                                    : "rule ") +
                          target.text());
    }
    // Reply rules' bounds on a sender group that ended by themselves, as
    // "sender 1 smtp:d".
    void sender_rule_expired(const AdminTarget& target, SenderGroup g) override {
        expired.push_back("sender " + std::to_string(g) + " " + target.text());
    }
};

// A transport with the given slot cost, one recipient per entry and no
// concurrency limit, as the preemption examples use.
inline TransportConfig unlimited_single_rcpt(int slot_cost) {
    TransportConfig tc;
    tc.slot_cost = slot_cost;
    tc.dest_recipient_limit = 1;
    tc.dest_concurrency_limit = 0;
    tc.init_dest_concurrency = 100;
    return tc;
}

// Makes a recipient with a unique address (its own original recipient).
inline Recipient rcpt(const std::string& addr, int64_t offset = 0) {
    return Recipient(offset, addr, addr, "", 0);
}

} // namespace cqmgr::core::test
