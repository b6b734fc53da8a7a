// Counting and probing deliveries and destinations (delivery_metrics.hpp).
#include "delivery_metrics.hpp"

#include "message.hpp"
#include "probes.hpp"

namespace cqmgr::qmgr {

Counters::Result counted_as(const core::DeliveryResult& r) {
    using K = core::DeliveryResult::Kind;
    using R = Counters::Result;
    return r.kind == K::unavailable ? R::unavailable
           : r.kind == K::crashed   ? R::crashed
           : r.status == 0          ? R::done
                                    : R::deferred;
}

void DeliveryMetrics::delivery_started(DeliveryEvent& ev) {
    const core::Entry& e = *ev.entry;
    CQMGR_PROBE_DELIVERY_START(e.queue->transport->name.c_str(), e.queue->name.c_str(),
                               e.message->id.c_str(), e.rcpts.size());
}

void DeliveryMetrics::delivery_ended(DeliveryEvent& ev) {
    const core::Entry& e = *ev.entry;
    // Only a reply carries a hop status.
    const char* dsn = ev.hop().status.c_str();
    const auto& env = static_cast<const Message&>(*e.message).env;
    protocol::TimeVal now = clock_.precise();
    double queue_delay = static_cast<double>(now.sec - env.arrival_sec) +
                         static_cast<double>(now.usec - env.arrival_usec) / 1e6;
    counters_.count_delivery(e.queue->transport->name, counted_as(ev.result), dsn,
                             static_cast<double>(ev.elapsed_us) / 1e6, queue_delay);
    CQMGR_PROBE_DELIVERY_END(e.queue->transport->name.c_str(), e.queue->name.c_str(),
                             e.message->id.c_str(), ev.elapsed_us, ev.probe_status(), dsn);
}

void DeliveryMetrics::queue_window(const core::Queue& q, bool positive, QueueTurn turn) {
    const char* transport = q.transport->name.c_str();
    CQMGR_PROBE_FEEDBACK(transport, q.name.c_str(), positive ? 1 : 0, q.window);
    if (turn == QueueTurn::died)
        CQMGR_PROBE_DEST_DEAD(transport, q.name.c_str(), q.dsn->status.c_str(),
                              q.dsn->reason.c_str());
    else if (turn == QueueTurn::revived)
        CQMGR_PROBE_DEST_REVIVE(transport, q.name.c_str());
}

} // namespace cqmgr::qmgr
