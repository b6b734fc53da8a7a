// A provider's learned limit onto the providers' gates (see
// provider_gates.hpp).
#include "provider_gates.hpp"

namespace cqmgr::qmgr {

void learned_to_provider_gates(ClusterLimits& gates, const Providers& providers,
                               core::Scheduler& sched, const std::string& transport,
                               const std::string& provider, const core::LearnedLimit& limit) {
    // The providers' scoping's first key for a member.
    gates.set_learned(transport + ":" + provider, limit);
    auto it = providers.members().find(provider);
    if (it == providers.members().end()) return;
    // Members are ordered by transport, then queue.
    for (auto m = it->second.lower_bound({transport, ""});
         m != it->second.end() && m->first == transport; ++m)
        if (const core::Queue* q = sched.find_queue(transport, m->second)) gates.rescope(*q);
}

} // namespace cqmgr::qmgr
