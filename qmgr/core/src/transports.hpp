// The transports: created on first use, each with its own settings; the
// round-robin that decides which one needs a delivery agent next; a dead
// transport (its agents cannot be reached) and its revival; the rate lock
// of a transport with a rate delay.  The transports own their queues and
// jobs, and through them every entry.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <map>
#include <memory>
#include <string>

namespace cqmgr::core {

struct Core;

class Transports {
  public:
    Transports(Core& c, Scheduler::TransportConfigFn transport_cfg);
    ~Transports();
    Transports(const Transports&) = delete;
    Transports& operator=(const Transports&) = delete;

    // Finds or creates transport `name` (Scheduler::transport).
    Transport& obtain(const std::string& name);
    // Transport `name`, if it exists.
    Transport* find(const std::string& name) const;
    const std::map<std::string, std::unique_ptr<Transport>>& all() const { return by_name_; }
    // A transport that needs one more agent (Scheduler::select_transport).
    Transport* select();
    // Declares `t` dead for transport_retry_time; its waiting entries go
    // to the retry transport.
    void dead(Transport& t, const Dsn& dsn);
    // Brings `t` back (when dead) and releases its rate lock.
    void unthrottle(Transport& t);
    // Revives every dead transport and queue at once (postqueue -f's F).
    void flush_dead();

  private:
    Core& c_;
    Scheduler::TransportConfigFn transport_cfg_;
    std::map<std::string, std::unique_ptr<Transport>> by_name_;
    List<Transport, &Transport::hook> rr_; // round-robin order
};

} // namespace cqmgr::core
