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
#include <utility>

namespace cqmgr::qmgr {

class ServiceSlots {
  public:
    ServiceSlots(asio::any_io_executor ex, int limit);

    // Waits for a free slot and takes it.
    awaitable<void> acquire();
    // Gives a slot back: to the longest waiter, if any.
    void release();

    // Slots taken now, and conversations waiting for one.
    int used() const { return used_; }
    int waiting() const { return static_cast<int>(waiters_.size()); }
    int limit() const { return limit_; }

    // A taken slot, given back when it goes out of scope.
    class Held {
      public:
        explicit Held(ServiceSlots& s) : slots_(&s) {}
        Held(Held&& o) noexcept : slots_(std::exchange(o.slots_, nullptr)) {}
        Held(const Held&) = delete;
        Held& operator=(const Held&) = delete;
        Held& operator=(Held&&) = delete;
        ~Held() {
            if (slots_) slots_->release();
        }

      private:
        ServiceSlots* slots_;
    };
    // acquire(), with the slot held by the result.
    awaitable<Held> hold();

  private:
    asio::any_io_executor ex_;
    int limit_;
    int used_ = 0;
    // One timer per waiter, never expiring by itself: release() cancels the
    // first, which hands it the slot.
    std::deque<std::shared_ptr<asio::steady_timer>> waiters_;
};

} // namespace cqmgr::qmgr
