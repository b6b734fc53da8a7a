// The reply rules' provider scope (see provider_scopes.hpp).
#include "provider_scopes.hpp"

namespace cqmgr::qmgr {

ReplyActions::Scopes with_provider_scopes(ReplyActions::Scopes scopes, const Providers& providers) {
    const Providers* p = &providers;
    scopes.provider = [p](const core::Queue& q) {
        const std::string* name = p->provider_of(q.transport->name, q.name);
        return name ? *name : std::string();
    };
    scopes.provider_queues = [p](const std::string& transport, const std::string& provider) {
        std::vector<std::string> queues;
        auto it = p->members().find(provider);
        if (it == p->members().end()) return queues;
        // Members are ordered by transport, then queue.
        for (auto m = it->second.lower_bound({transport, ""});
             m != it->second.end() && m->first == transport; ++m)
            queues.push_back(m->second);
        return queues;
    };
    return scopes;
}

} // namespace cqmgr::qmgr
