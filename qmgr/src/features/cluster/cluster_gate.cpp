// The arithmetic of a cluster gate (see cluster_gate.hpp).
#include "cluster_gate.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

std::optional<int> gate_allowance(const GateCounts& c) {
    if (c.mark_pending) return 0;
    std::optional<int> gate;
    if (c.limit > 0) {
        if (c.shared) {
            // A delivery needs a lease; a closing one still holds its own.
            gate = std::max(0, c.leases - c.closing);
        } else {
            // The other queues of the scope take their share of the limit
            // first; this queue's closing slots are not free yet either.
            int others = c.scope_busy - c.busy - c.closing;
            gate = std::max(0, c.limit - others - c.closing);
        }
    }
    if (c.rate) {
        // What is in flight already passed the rate; one more per token.
        int r = c.busy + c.tokens;
        gate = gate ? std::min(*gate, r) : r;
    }
    return gate;
}

bool lease_wanted(const GateCounts& c, int window) {
    return c.limit > 0 && c.shared && c.leases <= c.busy + c.closing &&
           c.leases < window + c.closing && c.scope_leases < c.limit;
}

ScopeLimits narrowed_by_learned(ScopeLimits s, const core::LearnedLimit& learned) {
    int cap = learned.rate_delay > 0 ? 1 : learned.concurrency;
    if (cap > 0 && (s.concurrency == 0 || cap < s.concurrency)) s.concurrency = cap;
    if (learned.rate_delay > 0) {
        cluster::RateSpec pace{1, int64_t{learned.rate_delay} * 1000, 1};
        if (!s.rate || pace.interval_ms() > s.rate->interval_ms()) s.rate = pace;
    }
    return s;
}

int leases_to_keep(const GateCounts& c, bool mail_waiting) {
    return c.busy + c.closing + (mail_waiting ? 1 : 0);
}

} // namespace cqmgr::qmgr
