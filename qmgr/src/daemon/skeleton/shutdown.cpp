#include "shutdown.hpp"

#include "log.hpp"

#include <cstdlib>

namespace cqmgr::qmgr {

void stop_daemon(asio::io_context& io, QueueManager* qm, MetricsEndpoint* metrics) {
    if (qm) qm->exiting();
    io.stop();
    if (qm) qm->save_state();
    if (metrics) metrics->stop();
    std::exit(0);
}

void restart_if_tables_changed(const TableWatch& tables, QueueManager* qm,
                               MetricsEndpoint* metrics) {
    if (auto name = tables.changed()) {
        log::info("table " + *name + " has changed -- restarting");
        if (qm) qm->exiting();
        if (qm) qm->save_state();
        if (metrics) metrics->stop();
        std::exit(0);
    }
}

} // namespace cqmgr::qmgr
