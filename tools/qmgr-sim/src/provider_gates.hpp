// The providers' limits in a simulation (cqmgr_provider_concurrency_limits,
// cqmgr_provider_rate_limits), kept as the daemon keeps them without Redis
// (ClusterLimits, local mode): each member queue of a provider's scope gets
// a gate (core::Limits::gate), the limit less what the scope's other
// queues have in flight, and, with a rate, what it has in flight plus the
// one token it holds of the scope's GCRA cell (cluster/gcra.hpp), taken
// while it has mail waiting.  Every start or end in a scope applies the
// gates of all its queues again.  A queue outside every provider costs a
// lookup at its birth and nothing per delivery.
#pragma once

#include "cqmgr/cluster/rate_spec.hpp"
#include "cqmgr/conf/lookup_table.hpp"
#include "cqmgr/core/scheduler.hpp"

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>

namespace cqmgr::sim {

class ProviderGates {
  public:
    using Warn = std::function<void(const std::string&)>;
    // The provider of destination `queue` ("": none).
    using ProviderOf = std::function<std::string(const std::string& queue)>;

    ProviderGates(conf::LookupTables concurrency, conf::LookupTables rates, ProviderOf provider_of,
                  Warn warn);

    // A queue is born: its first gate (none outside every limited scope).
    std::optional<int> queue_gate(const core::Queue& q);
    void queue_freed(const core::Queue& q);
    // A delivery of queue `q` starts or ends at `now` (seconds).
    void started(core::Scheduler& s, const core::Queue& q, double now);
    void ended(core::Scheduler& s, const core::Queue& q, double now);
    // When a token is due or a queue waits to be looked at (infinity: never).
    double next_wake() const;
    void wake(core::Scheduler& s, double now);

  private:
    struct Member {
        int busy = 0;
        int tokens = 0;                                            // 0 or 1
        double token_at = std::numeric_limits<double>::infinity(); // a booked token's time
        double ask_at = std::numeric_limits<double>::infinity();   // ask again then
    };
    struct Scope {
        int limit = 0;
        std::optional<cluster::RateSpec> rate;
        double tat = 0; // the GCRA cell (milliseconds)
        int busy = 0;
        std::map<std::pair<std::string, std::string>, Member> members; // (transport, queue)
    };
    // The scope of queue `name` of `transport`, made on first use; null
    // when no limit covers it.
    Scope* scope_of(const std::string& transport, const std::string& name);
    Scope* member_scope(const core::Queue& q);
    // Applies the gates of every member of `sc` that has a queue.
    void apply(core::Scheduler& s, Scope& sc);
    // Takes a token for each member that has mail waiting and none.
    void want(core::Scheduler& s, Scope& sc, double now);
    int allowance(const Scope& sc, const Member& m) const;

    conf::LookupTables concurrency_, rates_;
    ProviderOf provider_of_;
    Warn warn_;
    std::map<std::string, Scope> scopes_; // by the key that matched
    // Queue (transport NUL name) -> its scope's key ("" none), decided at birth.
    std::map<std::string, std::string> queue_scope_;
    bool fresh_ = false; // a member was born: wake() looks at it at once
};

} // namespace cqmgr::sim
