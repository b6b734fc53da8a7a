#include "control_flushes.hpp"

#include "cqmgr/protocol/flush_client.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
// Control flushes waiting for the flush service at most (distinct sites).
constexpr std::size_t max_waiting = 64;
} // namespace

ControlCommands::FlushDeferred ControlFlushes::ask(const std::string& site) {
    using D = ControlCommands::FlushDeferred;
    FlushDomains::Verdict v = domains_.match(site);
    if (v == FlushDomains::Verdict::no) return D::not_eligible;
    if (waiting_.size() >= max_waiting && !waiting_.contains(site)) return D::busy;
    if (waiting_.insert(site).second) asio::co_spawn(io_, request(site), asio::detached);
    return v == FlushDomains::Verdict::yes ? D::asked : D::service_asked;
}

awaitable<void> ControlFlushes::request(std::string site) {
    int status = co_await flush_send_site(domains_, slots_, params_.flush_service_name, site,
                                          std::chrono::seconds(params_.qmgr_ipc_timeout));
    waiting_.erase(site);
    if (status != protocol::flush_stat::ok && status != protocol::flush_stat::deny)
        log::warn("control: flush " + site + ": " + params_.flush_service_name +
                  " service failure");
}

} // namespace cqmgr::qmgr
