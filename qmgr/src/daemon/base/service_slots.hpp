// A bound on the connections the queue manager opens to Postfix's own
// services for itself (the defer log, the fast flush logs, the bounce
// daemon's notices): each conversation takes a slot first and gives it back
// when it ends; beyond the bound, conversations wait their turn in arrival
// order.  Each of these services takes one request per connection, so a
// burst (a batch of thousands of recipients to a dead route, a storm of
// control flushes, a destination's mail expiring at once) would otherwise
// open one descriptor per request at the same moment, and the queue
// manager would run out of them for its queue files and agents.  Stock
// makes these requests one at a time, blocking.
#pragma once

#include "cqmgr/protocol/asio.hpp"

#include <deque>
#include <memory>

namespace cqmgr::qmgr {

// Connections qmgr holds open to the bounce, defer, trace and flush services
// for its own requests at most.  Stock has one at a time; a few in
// parallel keep several messages' deferrals moving, and stay far below the
// descriptors that queue files and agents need.
inline constexpr int service_slot_limit = 8;

class ServiceSlots {
    struct State;

  public:
    ServiceSlots(asio::any_io_executor ex, int limit);

    // A taken slot, given back when it goes out of scope.  A conversation
    // still waiting when the daemon exits is destroyed with the loop, after
    // the slots: it then gives back nothing.
    class Held {
      public:
        Held(Held&& o) noexcept = default;
        Held(const Held&) = delete;
        Held& operator=(const Held&) = delete;
        Held& operator=(Held&&) = delete;
        ~Held();

      private:
        friend class ServiceSlots;
        explicit Held(std::weak_ptr<State> s) : state_(std::move(s)) {}
        std::weak_ptr<State> state_;
    };
    // Waits for a free slot and takes it.
    awaitable<Held> hold();

    // Slots taken now, and conversations waiting for one.
    int used() const;
    int waiting() const;

  private:
    struct State {
        int limit = 1;
        int used = 0;
        // One timer per waiter, never expiring by itself: a slot given back
        // cancels the first, which hands it the slot.
        std::deque<std::shared_ptr<asio::steady_timer>> waiters;
        // Gives a slot back: to the longest waiter, if any.
        void release();
    };

    asio::any_io_executor ex_;
    std::shared_ptr<State> state_;
};

} // namespace cqmgr::qmgr
