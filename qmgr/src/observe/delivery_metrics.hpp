// The metrics' and the probes' view of deliveries and destinations (an
// observer, delivery_observer.hpp): each delivery's outcome counted per
// transport (counters.hpp) and its start and end fired as USDT probes
// (probes.hpp), and each window change, death and revival as probes.
#pragma once

#include "clock.hpp"
#include "counters.hpp"
#include "delivery_observer.hpp"

namespace cqmgr::qmgr {

class DeliveryMetrics : public DeliveryObserver {
  public:
    DeliveryMetrics(Counters& counters, const WallClock& clock)
        : counters_(counters), clock_(clock) {}

    void delivery_started(DeliveryEvent& ev) override;
    void delivery_ended(DeliveryEvent& ev) override;
    void queue_window(const core::Queue& q, bool positive, QueueTurn turn) override;

  private:
    Counters& counters_;
    const WallClock& clock_;
};

// How the counters file the outcome `r`.
Counters::Result counted_as(const core::DeliveryResult& r);

} // namespace cqmgr::qmgr
