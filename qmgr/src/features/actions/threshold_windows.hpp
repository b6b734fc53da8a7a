// The thresholds of the reply rules (`after N/PERIOD`): how many times
// each rule matched for each scope key (a destination, a transport, ...)
// within the last PERIOD, in a sliding window.
//
// Memory is bounded: a window keeps at most N match times (N is at most
// ReplyAction::max_after), and at most `max_windows` windows are kept.
// When that many are kept and a new one is needed, the windows whose
// newest match has left their period go first, then the one matched least
// recently: a receiver's texts cannot make the queue manager keep more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class ThresholdWindows {
  public:
    explicit ThresholdWindows(size_t max_windows = 10'000) : max_windows_(max_windows) {}

    // Counts a match of rule `rule` for `key` at `now_ms`; true when it is
    // the `count`th within the last `period_ms` (then the window starts
    // again empty, so that the next action needs `count` more).  With
    // `count` 1 every match is one.
    bool hit(size_t rule, std::string_view key, int count, int64_t period_ms, int64_t now_ms);
    // Forgets the windows of `key` (its action was ended early).
    void forget(std::string_view key);
    // How many windows are kept.
    size_t size() const { return windows_.size(); }

  private:
    struct Window {
        std::vector<int64_t> times; // oldest first, at most the rule's count
        int64_t period_ms = 0;
    };
    // Makes room for one more window.
    void make_room(int64_t now_ms);

    size_t max_windows_;
    std::unordered_map<std::string, Window> windows_; // "rule NUL key"
    std::string id_;                                  // hit()'s key, kept for its capacity
};

} // namespace cqmgr::qmgr
