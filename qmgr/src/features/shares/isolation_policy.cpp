#include "isolation_policy.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

bool IsolationPolicy::slow(const Typical& typical, int64_t elapsed_ms) const {
    if (elapsed_ms < s_.slow_floor_ms || typical.samples < s_.min_samples) return false;
    return static_cast<double>(elapsed_ms) >= s_.slow_factor * typical.ms;
}

std::optional<IsolationPolicy::Change> IsolationPolicy::delivered(const Key& dest, int full,
                                                                  int window, Outcome outcome,
                                                                  int64_t elapsed_ms,
                                                                  int64_t now_ms) {
    Typical& typical = typical_[dest.first];
    bool is_slow = slow(typical, elapsed_ms);
    if (outcome == Outcome::success && !is_slow) {
        // A running average that follows the last few hundred deliveries.
        typical.ms = typical.samples == 0
                         ? static_cast<double>(elapsed_ms)
                         : typical.ms + (static_cast<double>(elapsed_ms) - typical.ms) / 16;
        typical.samples = std::min(typical.samples + 1, s_.min_samples);
    }
    auto it = dests_.find(dest);
    if (it != dests_.end()) it->second.last_ms = now_ms;
    bool strike = is_slow || outcome == Outcome::timeout;
    int64_t started_ms = now_ms - elapsed_ms;
    if (strike) {
        // Sent under an earlier share: that share has been changed for it.
        if (it != dests_.end() && started_ms < it->second.changed_ms) return std::nullopt;
        int current = it != dests_.end() ? it->second.share : full;
        int after = std::max(1, std::min(current, std::max(window, 1)) / 2);
        if (after >= current) return std::nullopt;
        int before = it != dests_.end() ? it->second.share : 0;
        if (it == dests_.end()) it = dests_.emplace(dest, Dest{}).first;
        Dest& d = it->second;
        d.share = after;
        d.changed_ms = now_ms;
        d.last_ms = now_ms;
        return Change{dest, before, after, is_slow ? Change::Why::slow : Change::Why::timeout,
                      elapsed_ms};
    }
    if (outcome != Outcome::success || it == dests_.end()) return std::nullopt;
    Dest& d = it->second;
    if (d.probe) {
        int before = d.share;
        dests_.erase(it);
        return Change{dest, before, 0, Change::Why::probe, elapsed_ms};
    }
    if (started_ms < d.changed_ms) return std::nullopt;
    int before = d.share;
    int after = before * 2 >= full ? 0 : before * 2;
    if (after == 0) {
        dests_.erase(it);
    } else {
        d.share = after;
        d.changed_ms = now_ms;
    }
    return Change{dest, before, after, Change::Why::fast, elapsed_ms};
}

std::optional<IsolationPolicy::Change> IsolationPolicy::died(const Key& dest, int full,
                                                             int64_t now_ms) {
    auto [it, fresh] = dests_.try_emplace(dest);
    Dest& d = it->second;
    int before = fresh ? 0 : d.share;
    d.probe = true;
    d.share = 1;
    d.changed_ms = now_ms;
    d.last_ms = now_ms;
    if (before == 1 || (fresh && full <= 1)) return std::nullopt;
    return Change{dest, before, 1, Change::Why::probe, 0};
}

std::vector<IsolationPolicy::Change> IsolationPolicy::sweep(int64_t now_ms) {
    std::vector<Change> out;
    for (auto it = dests_.begin(); it != dests_.end();) {
        if (now_ms - it->second.last_ms < s_.forget_ms) {
            ++it;
            continue;
        }
        out.push_back(Change{it->first, it->second.share, 0, Change::Why::forget, 0});
        it = dests_.erase(it);
    }
    return out;
}

int IsolationPolicy::lowered(const Key& dest) const {
    auto it = dests_.find(dest);
    return it == dests_.end() ? 0 : it->second.share;
}

bool IsolationPolicy::probing(const Key& dest) const {
    auto it = dests_.find(dest);
    return it != dests_.end() && it->second.probe;
}

int64_t IsolationPolicy::typical_ms(const std::string& transport) const {
    auto it = typical_.find(transport);
    if (it == typical_.end() || it->second.samples < s_.min_samples) return 0;
    return static_cast<int64_t>(it->second.ms);
}

} // namespace cqmgr::qmgr
