// The deadlines of the agent calls (agent_call.hpp) of one io_context,
// kept with a single timer.
//
// A call waits under a deadline at each step (connect, announcement,
// request, reply), and nearly every step ends long before it: a timer of
// its own per call cost each delivery a timer operation to start and
// another to cancel.  Here a call's deadline is a place in a list; the
// calls of one list all have the same timeout, so each list is in
// deadline order and arming or disarming is O(1).  One timer is set for
// the earliest deadline; when it fires it times out the calls whose
// deadline has passed and is set again for the next one.  A call that
// leaves the front of its list does not move the timer: it fires early,
// finds nothing due and is set for what is then first.  Only when no
// deadline is left is the timer stopped.
#pragma once

#include "cqmgr/protocol/asio.hpp"

#include <boost/intrusive/list.hpp>
#include <chrono>
#include <optional>
#include <vector>

namespace cqmgr::protocol {

// What waits under a deadline: an agent call, at one step.
class AgentDeadline : public boost::intrusive::list_base_hook<
                          boost::intrusive::link_mode<boost::intrusive::auto_unlink>> {
  public:
    using Clock = std::chrono::steady_clock;
    // Called from the loop when the deadline has passed (it is already
    // taken away).
    virtual void deadline_passed() = 0;
    Clock::time_point due() const { return due_; }

  protected:
    ~AgentDeadline() = default;

  private:
    friend class AgentDeadlines;
    Clock::time_point due_{};
};

class AgentDeadlines : public asio::execution_context::service {
  public:
    using Clock = AgentDeadline::Clock;
    using Duration = Clock::duration;
    static inline asio::execution_context::id id;

    explicit AgentDeadlines(asio::execution_context& ctx) : service(ctx) {}
    // The deadlines of the io_context `ex` runs on (made on first use).
    static AgentDeadlines& of(const asio::any_io_executor& ex);

    // Puts `d` under a deadline `timeout` from now, instead of the one it
    // had.
    void arm(AgentDeadline& d, Duration timeout, const asio::any_io_executor& ex);
    // Takes `d`'s deadline away (none: nothing).  With no deadline left the
    // timer stops, so that a loop with nothing else to do can end.
    void disarm(AgentDeadline& d);

  private:
    void shutdown() override;
    // Sets the timer for `due` unless it is set for earlier.
    void set_timer(Clock::time_point due, const asio::any_io_executor& ex);
    // Passes the deadlines that are due; sets the timer for the next one.
    void expire(const asio::any_io_executor& ex);

    using List = boost::intrusive::list<AgentDeadline, boost::intrusive::constant_time_size<false>>;
    struct Lane {
        Duration timeout;
        List waiting;
    };
    std::vector<Lane> lanes_; // a few: one per timeout in use
    size_t armed_ = 0;        // deadlines in the lanes
    std::optional<asio::steady_timer> timer_;
    std::optional<Clock::time_point> timer_due_;
};

} // namespace cqmgr::protocol
