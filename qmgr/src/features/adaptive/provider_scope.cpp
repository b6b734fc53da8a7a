// The adaptive limits' provider scope (see provider_scope.hpp).
#include "provider_scope.hpp"

#include "providers.hpp"

namespace cqmgr::qmgr {

namespace {
constexpr std::string_view group_prefix = "provider ";
} // namespace

ProviderScope::ProviderScope(const Providers& providers, Covers covers)
    : providers_(providers), covers_(std::move(covers)) {}

core::AdminTarget ProviderScope::target_of(const std::string& transport,
                                           const std::string& provider) {
    return core::AdminTarget{transport, std::string(group_prefix) + provider};
}

std::string ProviderScope::provider_in(const core::AdminTarget& target) {
    if (!target.queue.starts_with(group_prefix)) return {};
    return target.queue.substr(group_prefix.size());
}

void ProviderScope::place(const core::Queue& q) {
    if (!covers_(*q.transport)) return;
    const std::string* provider = providers_.provider_of(q.transport->name, q.name);
    Group* g = nullptr;
    if (provider) {
        auto [it, fresh] = groups_.try_emplace({q.transport->name, *provider});
        g = &it->second;
        if (fresh) {
            g->transport = q.transport->name;
            g->provider = *provider;
            g->target = target_of(g->transport, g->provider);
        }
    }
    Group* was = group(q);
    if (was == g) return;
    if (q.slot >= by_slot_.size()) by_slot_.resize(q.slot + 1, nullptr);
    // Its deliveries in flight move with it: their ends are counted where
    // it is then.
    if (was) was->busy -= q.busy_count();
    if (g) g->busy += q.busy_count();
    by_slot_[q.slot] = g;
}

void ProviderScope::joined(const core::Queue& q) {
    place(q);
}

void ProviderScope::queue_born(const core::Queue& q, std::optional<int>&) {
    if (q.slot < by_slot_.size()) by_slot_[q.slot] = nullptr;
    place(q);
}

void ProviderScope::queue_freed(const core::Queue& q) {
    if (q.slot < by_slot_.size()) by_slot_[q.slot] = nullptr;
}

} // namespace cqmgr::qmgr
