#include "self_defer.hpp"

#include "log.hpp"
#include "notices.hpp"
#include "status_line.hpp"

namespace cqmgr::qmgr {

SelfDefer::SelfDefer(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
                     const FlushDomains& flush_domains, ServiceSlots& slots,
                     std::function<void(Message&)> written)
    : io_(io), params_(params), clock_(clock), flush_domains_(flush_domains), slots_(slots),
      written_(std::move(written)) {}

void SelfDefer::defer(Message& m, const std::vector<queuefile::Recipient>& rcpts,
                      const core::Dsn& dsn) {
    m.flags |= message_flag::defer;
    if (rcpts.empty()) return;
    // Every record is counted now, so the message cannot end before the
    // last one is written.
    m.io_pending += static_cast<int>(rcpts.size());
    auto [it, fresh] = pending_.try_emplace(&m);
    for (const auto& r : rcpts)
        it->second.push_back({r, dsn});
    // One writer per message: a later call while it runs only adds records.
    if (fresh) asio::co_spawn(io_, drain(&m), asio::detached);
}

awaitable<void> SelfDefer::drain(Message* m) {
    auto& records = pending_.at(m);
    for (;;) {
        co_await append(m, records.front());
        records.pop_front();
        bool last = records.empty();
        if (last) pending_.erase(m);
        // Before the last record is counted off, nothing here may touch `m`
        // after written_(): the message may end and be freed in it.
        m->io_pending--;
        written_(*m);
        if (last) co_return;
    }
}

awaitable<void> SelfDefer::append(Message* m, const Record& rec) {
    const queuefile::Recipient& r = rec.rcpt;
    core::Dsn dsn = rec.dsn;
    if (dsn.status.empty() || dsn.status[0] != '4') dsn.status = "4.0.0";
    // Awaited in a statement of its own: GCC 12 miscompiled this co_await as
    // an if condition (the daemon died of SIGILL).
    int status = co_await send_deferral(slots_, params_.defer_service_name, m->id, m->env.tflags, r,
                                        dsn.status, dsn.reason, ipc_timeout());
    if (status != 0) log::warn(m->id + ": " + params_.defer_service_name + " service failure");
    log::info(status_line(
        {m->id, dsn.status, "deferred", dsn.reason, params_.info_log_address_format == "internal"},
        r, m->env, m->active_arrival, clock_.precise()));
    co_await flush_add_deferred(flush_domains_, slots_, params_.flush_service_name, m->id,
                                std::string(r.address()), ipc_timeout());
}

} // namespace cqmgr::qmgr
