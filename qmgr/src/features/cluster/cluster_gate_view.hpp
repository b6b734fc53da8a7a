// What the gate of one queue holds (ClusterLimits::gate_view()), for
// cqmgrctl explain and the providers' queries.
#pragma once

#include "cqmgr/cluster/gcra.hpp"

#include <optional>
#include <string>

namespace cqmgr::qmgr {

struct ClusterGateView {
    std::string lease_scope; // the concurrency limit's table key ("": none)
    int limit = 0;           // its cluster-wide limit (0: none)
    int leases = 0;          // the leases the queue holds that count now
    int scope_leases = 0;    // those this host holds in the whole scope
    bool shared = false;     // the leases count (else this host alone keeps the limit)
    std::string rate_scope;  // the rate's table key ("": none)
    std::optional<cluster::RateSpec> rate;
    int tokens = 0;               // rate tokens held (0 or 1)
    bool rate_shared = false;     // the rate is the cluster's cell (else a local one)
    bool mark_pending = false;    // its dead mark is still being read
    std::optional<int> allowance; // its own gate (the core's is the smaller of both limits')
};

} // namespace cqmgr::qmgr
