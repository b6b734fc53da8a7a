// What the units of the scheduler share: its settings, its driver, the
// time, the counts, the timers, and the units themselves, each of which
// reaches the others through here.  Internal to the core: the driver sees
// Scheduler only.
#pragma once

#include "cqmgr/core/scheduler.hpp"
#include "driver_calls.hpp"
#include "entries.hpp"
#include "jobs.hpp"
#include "limit_control.hpp"
#include "queues.hpp"
#include "selection.hpp"
#include "senders.hpp"
#include "timers.hpp"
#include "transports.hpp"

namespace cqmgr::core {

struct Core {
    Core(SchedulerConfig config, Scheduler::TransportConfigFn transport_cfg, Driver& d)
        : cfg(std::move(config)), driver(d), transports(*this, std::move(transport_cfg)) {}

    // Hands the driver the line `make()` builds, only with -v (the line is
    // not even built otherwise: some of these are on hot paths).
    template <class F> void trace(F&& make) const {
        if (cfg.verbose) driver.trace(make());
    }

    SchedulerConfig cfg;
    // The driver, through the re-entry check (driver_calls.hpp).
    DriverCalls driver;
    int64_t now = 0;
    int recipient_count = 0;
    int queue_count = 0;
    Timers timers;
    // The units.  Transports owns every transport, queue, job and entry.
    Transports transports;
    Queues queues{*this};
    LimitControl limits{*this};
    Jobs jobs{*this};
    Senders senders{*this};
    Entries entries{*this};
    Selection selection{*this};
};

} // namespace cqmgr::core
