// The bounds kept by name: what each may name, how a queue finds those
// that cover it.
#include "cqmgr/core/limit_book.hpp"

#include "cqmgr/core/panic.hpp"

#include <algorithm>

namespace cqmgr::core {

namespace {

// The setting in `m` that covers queue `queue` of transport `transport`:
// its own, else the one for its name on any transport.
template <class Map>
std::optional<typename Map::mapped_type> covering_of(const Map& m, const std::string& transport,
                                                     const std::string& queue) {
    if (m.empty() || queue.empty()) return std::nullopt;
    auto it = m.find(AdminTarget{transport, queue});
    if (it == m.end()) it = m.find(AdminTarget{{}, queue});
    if (it == m.end()) return std::nullopt;
    return it->second;
}

// Sets `map[target]` to `value`, or removes it when `value` is empty;
// false when nothing changed.
template <class Map, class V>
bool keep(Map& map, const AdminTarget& target, const std::optional<V>& value) {
    if (!value) return map.erase(target) > 0;
    auto [it, fresh] = map.try_emplace(target, *value);
    if (fresh) return true;
    if (it->second == *value) return false;
    it->second = *value;
    return true;
}

// Panics unless `target` names one queue of one transport.
void one_queue(const AdminTarget& target, const char* what) {
    if (target.transport.empty() || target.queue.empty())
        panic(std::string(what) + ": target " + target.text() + " is not one queue");
}

} // namespace

bool LimitBook::set(const AdminTarget& target, const LimitChange& change) {
    const Limits& value = change.value;
    switch (change.which) {
    case Bound::hold:
        if (value.hold && target.transport.empty() && target.queue.empty())
            panic("hold: empty target");
        return keep(holds_, target, value.hold);
    case Bound::cap:
        if (value.cap) {
            if (target.queue.empty()) panic("cap: no queue in target " + target.text());
            if (value.cap->concurrency < 1)
                panic("cap: concurrency " + std::to_string(value.cap->concurrency));
        }
        return keep(caps_, target, value.cap);
    case Bound::learned:
        one_queue(target, "learned limit");
        if (value.learned.concurrency < 0 || value.learned.rate_delay < 0 ||
            value.learned.quota < 0 || value.learned.window < 0 || value.learned.held_until < 0)
            panic("learned limit: negative limit for " + target.text());
        return keep(learned_, target,
                    value.learned.any() ? std::optional(value.learned) : std::nullopt);
    case Bound::share:
        one_queue(target, "share");
        if (value.share < 0) panic("share: negative share for " + target.text());
        return keep(shares_, target,
                    value.share > 0 ? std::optional(Share{value.share, value.share_always})
                                    : std::nullopt);
    case Bound::rule:
        if (value.rule) {
            if (target.transport.empty()) panic("rule: no transport in target " + target.text());
            if (!value.rule->any() || value.rule->concurrency < 0 || value.rule->pause < 0)
                panic("rule: empty or negative limit for " + target.text());
        }
        return keep(rules_, target, value.rule);
    case Bound::gate:
        break;
    }
    panic("limit book: a gate is not kept by name (" + target.text() + ")");
}

bool LimitBook::expire(Bound which, const AdminTarget& target, int64_t until) {
    auto end = [&](auto& map) {
        auto it = map.find(target);
        if (it == map.end() || it->second.until != until) return false;
        map.erase(it);
        return true;
    };
    if (which == Bound::hold) return end(holds_);
    if (which == Bound::cap) return end(caps_);
    if (which == Bound::rule) return end(rules_);
    if (which == Bound::learned) {
        // Only the hold ends: what was learned stays.
        auto it = learned_.find(target);
        if (it == learned_.end() || it->second.held_until != until) return false;
        it->second.held_until = 0;
        if (!it->second.any()) learned_.erase(it);
        return true;
    }
    panic("limit book: only a hold, a cap, a rule or a learned hold ends by itself (" +
          target.text() + ")");
}

Limits LimitBook::covering(const std::string& transport, const std::string& queue,
                           int full_share) const {
    Limits l;
    l.hold = covering_of(holds_, transport, queue);
    l.cap = covering_of(caps_, transport, queue);
    if (!learned_.empty())
        if (auto it = learned_.find(AdminTarget{transport, queue}); it != learned_.end())
            l.learned = it->second;
    l.share = full_share;
    if (!shares_.empty())
        if (auto it = shares_.find(AdminTarget{transport, queue}); it != shares_.end()) {
            l.share = full_share > 0 ? std::min(full_share, it->second.agents) : it->second.agents;
            l.share_always = it->second.always;
        }
    if (!rules_.empty()) {
        auto it = rules_.find(AdminTarget{transport, queue});
        if (it == rules_.end()) it = rules_.find(AdminTarget{transport, {}});
        if (it != rules_.end()) l.rule = it->second;
    }
    return l;
}

std::optional<AdminHold> LimitBook::transport_hold(const std::string& transport) const {
    auto it = holds_.find(AdminTarget{transport, {}});
    if (it == holds_.end()) return std::nullopt;
    return it->second;
}

void LimitBook::check() const {
    auto fail = [](const std::string& what) { panic("invariant: limits: " + what); };
    for (const auto& [target, hold] : holds_)
        if (target.transport.empty() && target.queue.empty()) fail("suspension without a target");
    for (const auto& [target, cap] : caps_) {
        if (target.queue.empty()) fail(target.text() + ": cap without a queue");
        if (cap.concurrency < 1) fail(target.text() + ": cap below 1");
    }
    for (const auto& [target, limit] : learned_)
        if (!limit.any() || target.transport.empty() || target.queue.empty())
            fail(target.text() + ": empty or untargeted learned limit");
    for (const auto& [target, share] : shares_)
        if (share.agents < 1 || target.transport.empty() || target.queue.empty())
            fail(target.text() + ": empty or untargeted lowered share");
    for (const auto& [target, rule] : rules_)
        if (!rule.any() || rule.concurrency < 0 || rule.pause < 0 || target.transport.empty())
            fail(target.text() + ": empty or untargeted rule's action");
}

} // namespace cqmgr::core
