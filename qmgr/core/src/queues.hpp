// The queues (destinations) of the transports: creation and release, the
// concurrency feedback and dead destinations (Postfix 2.5's throttle and
// unthrottle), the destination rate delay's pause, routing to the retry
// transport, and what is remembered about a destination from an earlier
// run.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::core {

struct Core;

class Queues {
  public:
    explicit Queues(Core& c) : c_(c) {}

    // queue.cpp
    // Creates queue `name` of `t` (there is none yet), with its bounds.
    Queue& create(Transport& t, const std::string& name, const std::string& nexthop);
    // Frees `q`, empty and ready (Driver::queue_freed first).
    void done(Queue& q);
    // Queue `name` of transport `transport`, if both exist.
    Queue* find(const std::string& transport, const std::string& name) const;
    // Scheduler::queue_for and Scheduler::route.
    Queue& queue_for(Transport& t, const std::string& name, const std::string& nexthop);
    Queue* route(Transport& t, const std::string& name, const std::string& nexthop, Dsn& reason,
                 bool flush_each);
    // Negative feedback: a failed delivery (the window shrinks; a whole
    // failed pseudo-cohort kills the queue).
    void throttle(Queue& q, const Dsn& dsn);
    // Positive feedback, or the revival of a dead queue.
    void unthrottle(Queue& q);
    // Brings dead `q` back now, and frees it when it has nothing to do.
    void revive(Queue& q);
    // Scheduler::queue_mark_dead.
    void mark_dead(Queue& q, const Dsn& dsn, int64_t until);
    // Moves `q`'s waiting entries to the retry transport (or has the
    // driver defer them).
    void defer_todo(Queue& q, const Dsn& dsn);
    // Pauses `q` for `delay` seconds (a rate delay).
    void suspend(Queue& q, int delay);
    // The pause of `q` is over.
    void resume(Queue& q);

    // memory.cpp
    // Scheduler::queue_restore_dead and Scheduler::queue_remember.
    Queue* restore_dead(const std::string& transport, const std::string& name,
                        const std::string& nexthop, const Dsn& dsn, int64_t until);
    void remember(const std::string& transport, const std::string& name, const QueueMemory& memory);

  private:
    // Applies what is remembered about new queue `q`, and forgets it.
    void recall(Queue& q);

    Core& c_;
    std::map<std::pair<std::string, std::string>, QueueMemory> memories_; // remember()
    std::vector<uint32_t> free_slots_; // Queue::slot of freed queues
    uint32_t slots_ = 0;               // slots ever given
};

} // namespace cqmgr::core
