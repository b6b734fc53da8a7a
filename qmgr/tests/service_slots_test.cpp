// The bound on qmgr's own service connections: never more conversations at
// once than the limit, the waiting ones served in arrival order, and a slot
// given back by a conversation that ends.
#include "service_slots.hpp"

#include <functional>
#include <gtest/gtest.h>
#include <vector>

using namespace cqmgr;
using namespace std::chrono_literals;

namespace {
// A conversation of `ms` milliseconds holding one slot of `slots`.
awaitable<void> converse(qmgr::ServiceSlots& slots, int id, int ms, int& now_open, int& peak,
                         std::vector<int>& order) {
    qmgr::ServiceSlots::Held slot = co_await slots.hold();
    order.push_back(id);
    peak = std::max(peak, ++now_open);
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(ms));
    co_await t.async_wait(asio::use_awaitable);
    --now_open;
}
} // namespace

TEST(ServiceSlots, NeverMoreThanTheLimitAndInArrivalOrder) {
    asio::io_context io;
    qmgr::ServiceSlots slots(io.get_executor(), 3);
    int now_open = 0, peak = 0;
    std::vector<int> order;
    for (int i = 0; i < 20; ++i)
        asio::co_spawn(io, converse(slots, i, 1 + i % 4, now_open, peak, order), asio::detached);
    io.run();
    EXPECT_EQ(peak, 3);
    ASSERT_EQ(order.size(), 20u);
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(order[static_cast<size_t>(i)], i);
    EXPECT_EQ(slots.used(), 0);
    EXPECT_EQ(slots.waiting(), 0);
}

TEST(ServiceSlots, ANewcomerDoesNotTakeTheSlotPassedToAWaiter) {
    asio::io_context io;
    qmgr::ServiceSlots slots(io.get_executor(), 1);
    std::vector<int> order;
    std::function<awaitable<void>(int)> take = [&](int id) -> awaitable<void> {
        {
            qmgr::ServiceSlots::Held slot = co_await slots.hold();
            order.push_back(id);
        }
        // The slot is on its way to 1; 2 asks for one only now.
        if (id == 0) asio::co_spawn(io, take(2), asio::detached);
    };
    asio::co_spawn(io, take(0), asio::detached);
    asio::co_spawn(io, take(1), asio::detached);
    io.run();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(slots.used(), 0);
}

// The daemon's exit: the loop, with conversations holding or waiting for a
// slot, goes after the slots; what it destroys gives back nothing.
TEST(ServiceSlots, ConversationsThatOutliveTheSlotsLeaveThemAlone) {
    auto io = std::make_unique<asio::io_context>();
    auto slots = std::make_unique<qmgr::ServiceSlots>(io->get_executor(), 1);
    auto hold_forever = [&]() -> awaitable<void> {
        qmgr::ServiceSlots::Held slot = co_await slots->hold();
        asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::hours(1));
        co_await t.async_wait(asio::use_awaitable);
    };
    asio::co_spawn(*io, hold_forever(), asio::detached);
    asio::co_spawn(*io, hold_forever(), asio::detached);
    io->run_for(std::chrono::milliseconds(10));
    EXPECT_EQ(slots->used(), 1);
    EXPECT_EQ(slots->waiting(), 1);
    slots.reset();
    io.reset(); // ASan: no use of the freed slots
}
