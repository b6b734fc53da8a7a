// Limits learned from the receivers' replies: set by the daemon's adaptive
// policy, kept by name (so that they outlast the queue they cover, as the
// administrator's settings do), copied onto the queue they name.
#include "cqmgr/core/scheduler.hpp"

namespace cqmgr::core {

bool Scheduler::learned_set(const AdminTarget& target, const LearnedLimit& limit) {
    if (target.transport.empty() || target.queue.empty())
        panic("learned_set: target " + target.text() + " is not one queue");
    if (limit.concurrency < 0 || limit.rate_delay < 0)
        panic("learned_set: negative limit for " + target.text());
    auto it = learned_.find(target);
    if (!limit.any()) {
        if (it == learned_.end()) return false;
        learned_.erase(it);
    } else if (it == learned_.end()) {
        learned_.emplace(target, limit);
    } else if (it->second == limit) {
        return false;
    } else {
        it->second = limit;
    }
    trace([&] {
        return "learned_set: " + target.text() + " concurrency " +
               std::to_string(limit.concurrency) + " rate delay " +
               std::to_string(limit.rate_delay);
    });
    admin_changed(target);
    return true;
}

// The learned limit of queue `queue` of transport `transport`, or none.
LearnedLimit Scheduler::learned_for(const std::string& transport, const std::string& queue) const {
    if (learned_.empty()) return {};
    auto it = learned_.find(AdminTarget{transport, queue});
    return it == learned_.end() ? LearnedLimit{} : it->second;
}

} // namespace cqmgr::core
