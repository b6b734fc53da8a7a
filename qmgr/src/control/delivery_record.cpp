#include "delivery_record.hpp"

namespace cqmgr::qmgr {

void DeliveryRecord::started(InFlight& f, const core::Entry& e, const WallClock& clock) {
    f.unlink();
    f.entry = &e;
    f.started = clock.precise();
    in_flight_.push_back(f);
}

void DeliveryRecord::finished(InFlight& f, const core::Dsn& hop, const WallClock& clock) {
    f.unlink();
    const core::Entry& e = *f.entry;
    if (hop.status.empty()) return;
    // Agents report a hop status when the destination itself failed
    // (a refused connection, a 4xx greeting); a plain success reports none.
    const core::Queue& q = *e.queue;
    last_[key(q.transport->name, q.name)] = {hop, clock.now()};
    if (last_.size() > 2 * static_cast<size_t>(sched_.queue_count()) + 64) prune();
}

const DeliveryRecord::LastDsn* DeliveryRecord::last_dsn(const core::Queue& q) const {
    if (last_.empty()) return nullptr;
    auto it = last_.find(key(q.transport->name, q.name));
    return it == last_.end() ? nullptr : &it->second;
}

std::string DeliveryRecord::key(const std::string& transport, const std::string& queue) {
    std::string k;
    k.reserve(transport.size() + 1 + queue.size());
    k += transport;
    k += '\0';
    k += queue;
    return k;
}

void DeliveryRecord::prune() {
    const auto& transports = sched_.transports();
    std::erase_if(last_, [&](const auto& kv) {
        const std::string& k = kv.first;
        size_t nul = k.find('\0');
        auto t = transports.find(k.substr(0, nul));
        return t == transports.end() || !t->second->queue_by_name.contains(k.substr(nul + 1));
    });
}

} // namespace cqmgr::qmgr
