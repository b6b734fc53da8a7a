#include "self_defer.hpp"

#include "log.hpp"
#include "notices.hpp"
#include "status_line.hpp"

namespace cqmgr::qmgr {

SelfDefer::SelfDefer(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
                     const FlushDomains& flush_domains, std::function<void(Message&)> written)
    : io_(io), params_(params), clock_(clock), flush_domains_(flush_domains),
      written_(std::move(written)) {}

void SelfDefer::defer(Message& m, const std::vector<queuefile::Recipient>& rcpts,
                      const core::Dsn& dsn) {
    m.flags |= 1;
    if (rcpts.empty()) return;
    // One record at a time, in the batch's order, as stock writes them: a
    // batch of thousands of recipients must not open thousands of
    // connections to the defer service at once.  Every record is counted
    // now, so the message cannot end before the last one is written.
    m.io_pending += static_cast<int>(rcpts.size());
    asio::co_spawn(io_, append_all(&m, rcpts, dsn), asio::detached);
}

awaitable<void> SelfDefer::append_all(Message* m, std::vector<queuefile::Recipient> rcpts,
                                      core::Dsn dsn) {
    for (auto& r : rcpts)
        co_await append(m, std::move(r), dsn);
}

awaitable<void> SelfDefer::append(Message* m, queuefile::Recipient r, core::Dsn dsn) {
    if (dsn.status.empty() || dsn.status[0] != '4') dsn.status = "4.0.0";
    // Awaited in a statement of its own: GCC 12 miscompiled this co_await as
    // an if condition (the daemon died of SIGILL).
    int status = co_await send_deferral(params_.defer_service_name, m->id, m->env.tflags, r,
                                        dsn.status, dsn.reason, ipc_timeout());
    if (status != 0) log::warn(m->id + ": " + params_.defer_service_name + " service failure");
    log::info(status_line(
        {m->id, dsn.status, "deferred", dsn.reason, params_.info_log_address_format == "internal"},
        r, m->env, m->active_arrival, clock_.precise()));
    co_await flush_add_deferred(flush_domains_, params_.flush_service_name, m->id,
                                std::string(r.address()), ipc_timeout());
    m->io_pending--;
    written_(*m);
}

} // namespace cqmgr::qmgr
