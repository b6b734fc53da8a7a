#include "notices.hpp"

#include "cqmgr/protocol/status_client.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

awaitable<int> send_notice(ServiceSlots& slots, std::string service, protocol::NoticeRequest req,
                           std::chrono::seconds ipc_timeout) {
    std::string id = req.queue_id;
    int nrequest = req.nrequest;
    bool quiet = req.flags & protocol::bounce_flag::clean;
    ServiceSlots::Held slot = co_await slots.hold();
    auto r = co_await protocol::status_notify("private/" + service, std::move(req),
                                              protocol::CommandTimeouts::notice(ipc_timeout));
    if (!r.completed) log::warn(r.error);
    int status = r.completed ? r.status : -1;
    if (status != 0 && !quiet)
        log::info(id + ": status=deferred (" +
                  std::string(protocol::notice_failure_text(nrequest)) + " failed)");
    co_return status;
}

awaitable<int> send_deferral(ServiceSlots& slots, std::string service, std::string queue_id,
                             int tflags, queuefile::Recipient rcpt, std::string status,
                             std::string reason, std::chrono::seconds ipc_timeout) {
    protocol::HopStatus dsn;
    dsn.status = std::move(status);
    dsn.reason = std::move(reason);
    auto req = protocol::defer_append_request(
        tflags, std::move(queue_id),
        protocol::RequestRecipient{std::string(rcpt.orig_rcpt()), std::string(rcpt.address()),
                                   rcpt.offset(), std::string(rcpt.dsn_orcpt()),
                                   rcpt.notify_flags()},
        dsn);
    ServiceSlots::Held slot = co_await slots.hold();
    auto r = co_await protocol::status_append("private/" + service, std::move(req),
                                              protocol::CommandTimeouts::ipc(ipc_timeout));
    if (!r.completed) log::warn(r.error);
    co_return r.completed ? r.status : -1;
}

} // namespace cqmgr::qmgr
