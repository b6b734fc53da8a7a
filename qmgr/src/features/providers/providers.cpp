// Providers: queue to provider membership (see providers.hpp).
#include "providers.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

Providers::Providers(asio::io_context& io, ProviderMaps maps, core::Scheduler& sched)
    : io_(io), maps_(std::move(maps)), sched_(sched) {}

const std::string* Providers::provider_of(const std::string& transport,
                                          const std::string& queue) const {
    if (member_.empty()) return nullptr;
    auto it = member_.find(key_of(transport, queue));
    return it == member_.end() ? nullptr : &it->second.provider;
}

uint32_t Providers::number_of(const core::Queue& q) const {
    const std::string* p = provider_of(q.transport->name, q.name);
    if (!p) return 0;
    auto it = numbers_.find(*p);
    return it == numbers_.end() ? 0 : it->second;
}

std::optional<std::string> Providers::mx_domain(const std::string& name) {
    if (name.empty() || name.front() == '[') return std::nullopt;
    std::string domain = name.substr(0, name.find(':'));
    if (domain.find('.') == std::string::npos) return std::nullopt;
    return domain;
}

void Providers::queue_born(const core::Queue& q, std::optional<int>&) {
    const std::string& transport = q.transport->name;
    if (auto p = maps_.provider_of_domain(q.name)) {
        std::string key = key_of(transport, q.name);
        member_[key] = {*p, true};
        by_provider_[*p].emplace(transport, q.name);
        numbers_.try_emplace(*p, static_cast<uint32_t>(numbers_.size() + 1));
        return;
    }
    if (!mx_) return;
    auto domain = mx_domain(q.name);
    if (!domain) return;
    if (auto known = mx_->cached(transport, q.nexthop, *domain)) {
        // Its MX set is known (the resolver's cache): a member from birth.
        if (!ProviderMaps::valid_name(*known)) return;
        set_member(transport, q.name, *known);
        log::info("provider: " + transport + ":" + q.name + " joins " + *known + " (MX)");
        return;
    }
    uint64_t seq = ++seq_;
    pending_[key_of(transport, q.name)] = seq;
    mx_->lookup(transport, q.nexthop, *domain,
                [this, transport, queue = q.name, seq](const std::string& provider) {
                    // An answer from the cache comes inside the scheduler's callback
                    // (this queue's birth): it is acted on once that has returned.
                    if (sched_.in_callback()) {
                        asio::post(io_, [this, transport, queue, seq, provider] {
                            answered(transport, queue, seq, provider);
                        });
                        return;
                    }
                    answered(transport, queue, seq, provider);
                });
}

void Providers::answered(const std::string& transport, const std::string& queue, uint64_t seq,
                         const std::string& provider) {
    std::string key = key_of(transport, queue);
    auto it = pending_.find(key);
    if (it == pending_.end() || it->second != seq) return; // freed meanwhile
    pending_.erase(it);
    std::string p = ProviderMaps::valid_name(provider) ? provider : std::string();
    if (p.empty()) return; // on its own, as it started
    set_member(transport, queue, p);
    if (const core::Queue* q = sched_.find_queue(transport, queue)) {
        log::info("provider: " + transport + ":" + queue + " joins " + p + " (MX)");
        if (listener_) listener_(*q);
    }
}

void Providers::set_member(const std::string& transport, const std::string& queue,
                           const std::string& provider) {
    std::string key = key_of(transport, queue);
    auto it = member_.find(key);
    if (it != member_.end()) {
        if (it->second.provider == provider) return;
        auto old = by_provider_.find(it->second.provider);
        if (old != by_provider_.end()) {
            old->second.erase({transport, queue});
            if (old->second.empty()) by_provider_.erase(old);
        }
        if (provider.empty()) {
            member_.erase(it);
            return;
        }
        it->second.provider = provider;
    } else {
        if (provider.empty()) return;
        member_[key] = {provider, false};
    }
    by_provider_[provider].emplace(transport, queue);
    numbers_.try_emplace(provider, static_cast<uint32_t>(numbers_.size() + 1));
}

void Providers::queue_freed(const core::Queue& q) {
    if (member_.empty() && pending_.empty()) return;
    std::string key = key_of(q.transport->name, q.name);
    pending_.erase(key);
    set_member(q.transport->name, q.name, "");
}

} // namespace cqmgr::qmgr
