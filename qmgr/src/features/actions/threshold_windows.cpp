// The reply rules' sliding windows (threshold_windows.hpp).
#include "threshold_windows.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

bool ThresholdWindows::hit(size_t rule, std::string_view key, int count, int64_t period_ms,
                           int64_t now_ms) {
    if (count <= 1) return true;
    id_ = std::to_string(rule);
    id_ += '\0';
    id_ += key;
    auto it = windows_.find(id_);
    if (it == windows_.end()) {
        if (windows_.size() >= max_windows_) make_room(now_ms);
        it = windows_.emplace(id_, Window{{}, period_ms}).first;
    }
    Window& w = it->second;
    w.period_ms = period_ms;
    // Matches that left the period no longer count.
    auto live = std::find_if(w.times.begin(), w.times.end(),
                             [&](int64_t t) { return now_ms - t < period_ms; });
    w.times.erase(w.times.begin(), live);
    w.times.push_back(now_ms);
    if (static_cast<int>(w.times.size()) < count) return false;
    windows_.erase(it);
    return true;
}

void ThresholdWindows::forget(std::string_view key) {
    std::erase_if(windows_, [&](const auto& kv) {
        const std::string& id = kv.first;
        size_t nul = id.find('\0');
        return std::string_view(id).substr(nul + 1) == key;
    });
}

void ThresholdWindows::make_room(int64_t now_ms) {
    size_t before = windows_.size();
    std::erase_if(windows_, [&](const auto& kv) {
        const Window& w = kv.second;
        return w.times.empty() || now_ms - w.times.back() >= w.period_ms;
    });
    if (windows_.size() < before) return;
    auto oldest =
        std::min_element(windows_.begin(), windows_.end(), [](const auto& a, const auto& b) {
            return a.second.times.back() < b.second.times.back();
        });
    if (oldest != windows_.end()) windows_.erase(oldest);
}

} // namespace cqmgr::qmgr
