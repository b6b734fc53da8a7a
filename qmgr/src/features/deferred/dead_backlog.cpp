#include "dead_backlog.hpp"

#include "cqmgr/queuefile/queue_layout.hpp"
#include "dead_backlog_policy.hpp"
#include "end_plan.hpp"
#include "log.hpp"
#include "scan.hpp"

#include <algorithm>
#include <cctype>

namespace cqmgr::qmgr {

DeadBacklog::DeadBacklog(const conf::QmgrParams& params, const WallClock& clock,
                         const queuefile::ActiveQueue& store, core::Scheduler& sched,
                         DeferredIndex& index)
    : params_(params), clock_(clock), store_(store), sched_(sched), index_(index),
      jitter_random_(random_seed()) {}

bool DeadBacklog::dead(const std::string& destination) const {
    auto colon = destination.find(':');
    if (colon == std::string::npos) return false;
    std::string transport = destination.substr(0, colon);
    auto t = sched_.transports().find(transport);
    if (t == sched_.transports().end()) return false;
    if (t->second->dead) return true;
    // A queue is named after its nexthop in lower case (per-recipient
    // queues are not: they are never found here, so never dead).
    std::string name = destination.substr(colon + 1);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const core::Queue* q = sched_.find_queue(transport, name);
    return q && q->dead();
}

bool DeadBacklog::postpone(const std::string& id, int scan_flags, mode_t mode) {
    using namespace queuefile;
    if (!on()) return false;
    int64_t now = clock_.now();
    const DeferredIndex::Destinations* d = index_.find(id, now);
    if (!d) return false;
    sched_.set_time(now); // revivals that are due happen first
    BacklogCase c;
    c.times = index_.times(id);
    c.explicit_request = (scan_flags & (scan_flag::all | scan_flag::flush)) ||
                         (mode & (qmode::unthrottle | qmode::expire));
    c.destinations = static_cast<int>(d->size());
    for (const std::string* dest : *d)
        c.dead += dead(*dest);
    if (backlog_choice(c, now, params_) == BacklogChoice::take) return false;
    int64_t when = now + next_attempt_delay(c.times->arrival, now, params_, jitter_random_);
    if (auto e = store_.postpone(id, when)) {
        // Gone meanwhile (postsuper): nothing to take.  Otherwise the scan
        // takes it as stock would.
        if (!e->gone()) {
            log::warn(e->text);
            return false;
        }
        index_.erase(id);
        return true;
    }
    log::debug("dead backlog: " + id + " postponed for " + std::to_string(when - now) + " secs");
    ++postponed_;
    for (const std::string* dest : *d)
        destinations_.insert(*dest);
    return true;
}

void DeadBacklog::pass_done() {
    if (postponed_ == 0) return;
    log::info("dead backlog: " + std::to_string(postponed_) + " messages for " +
              std::to_string(destinations_.size()) + " dead destinations postponed");
    postponed_ = 0;
    destinations_.clear();
}

} // namespace cqmgr::qmgr
