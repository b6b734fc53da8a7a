#include "deferred_index.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

void DeferredIndex::add(const std::string& id, const std::vector<std::string>& destinations,
                        int64_t now, const Times& times) {
    Entry fresh;
    fresh.seen = now;
    fresh.times = times;
    for (const auto& d : destinations) {
        auto it = names_.try_emplace(d, 0).first;
        if (std::find(fresh.destinations.begin(), fresh.destinations.end(), &it->first) !=
            fresh.destinations.end())
            continue;
        ++it->second;
        fresh.destinations.push_back(&it->first);
    }
    auto [it, added] = entries_.try_emplace(id);
    if (!added) release(it->second);
    it->second = std::move(fresh);
}

const DeferredIndex::Destinations* DeferredIndex::find(const std::string& id, int64_t now) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return nullptr;
    it->second.seen = now;
    return &it->second.destinations;
}

const DeferredIndex::Times* DeferredIndex::times(const std::string& id) const {
    auto it = entries_.find(id);
    return it == entries_.end() ? nullptr : &it->second.times;
}

void DeferredIndex::erase(const std::string& id) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    release(it->second);
    entries_.erase(it);
}

void DeferredIndex::sweep(int64_t before) {
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->second.seen < before) {
            release(it->second);
            it = entries_.erase(it);
        } else {
            ++it;
        }
    }
}

void DeferredIndex::release(const Entry& e) {
    for (const std::string* d : e.destinations) {
        auto it = names_.find(*d);
        if (it != names_.end() && --it->second <= 0) names_.erase(it);
    }
}

} // namespace cqmgr::qmgr
