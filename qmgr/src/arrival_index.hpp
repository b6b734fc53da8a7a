// The arrival times of the messages in the active queue, so that the
// control socket's `summary` names the oldest one's age without walking
// 20,000 messages on every poll.
#pragma once

#include "cqmgr/protocol/messages.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <utility>

namespace cqmgr::qmgr {

class ArrivalIndex {
  public:
    // A message entered the active queue.
    void add(protocol::TimeVal arrival) { times_.insert({arrival.sec, arrival.usec}); }
    // A message added before left it; a time never added is a broken invariant.
    void remove(protocol::TimeVal arrival);
    // The earliest arrival, if any message is active.
    std::optional<protocol::TimeVal> oldest() const {
        if (times_.empty()) return std::nullopt;
        return protocol::TimeVal{times_.begin()->first, times_.begin()->second};
    }
    std::size_t size() const { return times_.size(); }

  private:
    std::multiset<std::pair<int64_t, int64_t>> times_;
};

} // namespace cqmgr::qmgr
