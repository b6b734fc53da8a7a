// Kept MX answers (see mx_cache.hpp).
#include "mx_cache.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

std::chrono::seconds MxCache::ttl_for(const MxAnswer& answer) const {
    switch (answer.outcome) {
    case MxOutcome::answer:
        return std::clamp(answer.ttl, options_.min_ttl,
                          std::max(options_.min_ttl, options_.max_ttl));
    case MxOutcome::no_mx:
    case MxOutcome::nxdomain:
        return std::clamp(answer.ttl, options_.negative_min_ttl,
                          std::max(options_.negative_min_ttl, options_.negative_max_ttl));
    case MxOutcome::timeout:
    case MxOutcome::server_failure:
        return options_.failure_ttl;
    case MxOutcome::busy:
        break;
    }
    return std::chrono::seconds(0);
}

const MxAnswer* MxCache::get(const std::string& key, Clock::time_point now) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    if (it->second.expires <= now) {
        lru_.erase(it->second.age);
        entries_.erase(it);
        return nullptr;
    }
    lru_.splice(lru_.begin(), lru_, it->second.age);
    return &it->second.answer;
}

void MxCache::put(const std::string& key, const MxAnswer& answer, Clock::time_point now) {
    std::chrono::seconds ttl = ttl_for(answer);
    if (ttl <= std::chrono::seconds(0) || options_.cache_size == 0) return;
    auto it = entries_.find(key);
    if (it != entries_.end()) {
        it->second.answer = answer;
        it->second.expires = now + ttl;
        lru_.splice(lru_.begin(), lru_, it->second.age);
        return;
    }
    while (entries_.size() >= options_.cache_size) {
        entries_.erase(lru_.back());
        lru_.pop_back();
    }
    lru_.push_front(key);
    entries_.emplace(key, Entry{answer, now + ttl, lru_.begin()});
}

} // namespace cqmgr::qmgr
