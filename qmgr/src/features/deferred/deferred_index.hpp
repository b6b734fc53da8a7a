// The destinations (transport:nexthop) of the messages cqmgr itself moved
// to deferred, by queue ID, for the recovery ramp (recovery_ramp.hpp) and
// the dead backlog (dead_backlog.hpp), with what the dead backlog needs to
// know of a message's times without reading its file: a
// deferred file does not say where its recipients go, and resolving it
// again before it is taken would cost what taking it saves.  An entry is
// added when a message is deferred and dropped when its file leaves
// deferred through the queue manager; entries of files that left another
// way (postsuper -d, -h, -r) are swept once they have not been looked up
// for longer than any retry waits.  Destination names are kept once, with
// a count of the entries that use them, since thousands of deferred
// messages usually share a few destinations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

// A message's times as its envelope gives them (Unix seconds): its
// arrival, its delay warning time (0: none due), and whether its sender is
// null (a bounce, with bounce_queue_lifetime).
struct DeferredTimes {
    int64_t arrival = 0;
    int64_t warn_time = 0;
    bool null_sender = false;
};

class DeferredIndex {
  public:
    using Destinations = std::vector<const std::string*>;
    using Times = DeferredTimes;

    // Records message `id` with its destinations and times at time `now`
    // (seconds), replacing what was recorded before.
    void add(const std::string& id, const std::vector<std::string>& destinations, int64_t now,
             const Times& times = {});
    // The destinations of `id`, or nullptr when it is not in the index; a
    // hit counts as a look-up at `now`.
    const Destinations* find(const std::string& id, int64_t now);
    // The times recorded with `id` (nullptr when it is not in the index).
    const Times* times(const std::string& id) const;
    // Forgets `id` (its file left deferred).
    void erase(const std::string& id);
    // Forgets the entries neither added nor looked up since `before`.
    void sweep(int64_t before);

    std::size_t size() const { return entries_.size(); }
    // How many messages in the index go (in part) to `destination`
    // (transport:nexthop), for cqmgrctl explain.
    int messages_for(const std::string& destination) const {
        auto it = names_.find(destination);
        return it == names_.end() ? 0 : it->second;
    }
    // Distinct destination names kept (for tests).
    std::size_t names() const { return names_.size(); }

  private:
    struct Entry {
        Destinations destinations;
        Times times;
        int64_t seen = 0;
    };
    // Gives up an entry's hold on its destination names.
    void release(const Entry& e);

    std::unordered_map<std::string, Entry> entries_;
    // Each name and the entries that use it (the keys stay put, so entries
    // point at them).
    std::unordered_map<std::string, int> names_;
};

} // namespace cqmgr::qmgr
