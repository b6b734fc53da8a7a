#include "cqmgr/protocol/status_client.hpp"

namespace cqmgr::protocol {

std::string AppendRequest::encode() const {
    AttrWriter w;
    w.num("nrequest", bounce_cmd::append)
        .num("flags", flags)
        .str("queue_id", queue_id)
        .str("original_recipient", recipient.original_recipient)
        .str("recipient", recipient.recipient)
        .lnum("offset", recipient.offset)
        .str("dsn_orig_rcpt", recipient.dsn_orig_rcpt)
        .num("notify_flags", recipient.notify_flags)
        .str("status", dsn.status)
        .str("diag_type", dsn.diag_type)
        .str("diag_text", dsn.diag_text)
        .str("mta_type", dsn.mta_type)
        .str("mta_mname", dsn.mta_mname)
        .str("action", dsn.action)
        .str("reason", dsn.reason)
        .end();
    return w.take();
}

namespace {
// Builds the request with the status forced into class `cls` ('4' or '5').
AppendRequest forced(char cls, const char* fallback, const char* action, int tflags,
                     std::string queue_id, RequestRecipient rcpt, HopStatus dsn) {
    if (dsn.status.empty() || dsn.status[0] != cls || !dsn_status_valid(dsn.status))
        dsn.status = fallback;
    dsn.action = action;
    return AppendRequest{tflags, std::move(queue_id), std::move(rcpt), std::move(dsn)};
}
} // namespace

AppendRequest defer_append_request(int tflags, std::string queue_id, RequestRecipient rcpt,
                                   HopStatus dsn) {
    return forced('4', "4.0.0", "delayed", tflags, std::move(queue_id), std::move(rcpt),
                  std::move(dsn));
}

AppendRequest bounce_append_request(int tflags, std::string queue_id, RequestRecipient rcpt,
                                    HopStatus dsn) {
    return forced('5', "5.0.0", "failed", tflags, std::move(queue_id), std::move(rcpt),
                  std::move(dsn));
}

AppendRequest trace_append_request(int tflags, std::string queue_id, RequestRecipient rcpt,
                                   HopStatus dsn, std::string_view relay) {
    if (relay != "none") dsn.reason = "delivery via " + std::string(relay) + ": " + dsn.reason;
    return AppendRequest{tflags, std::move(queue_id), std::move(rcpt), std::move(dsn)};
}

awaitable<CommandResult> status_append(std::string path, AppendRequest request,
                                       CommandTimeouts timeouts) {
    co_return co_await run_command(std::move(path), status_protocol, request.encode(), timeouts);
}

awaitable<CommandResult> status_notify(std::string path, NoticeRequest request,
                                       CommandTimeouts timeouts) {
    co_return co_await run_command(std::move(path), status_protocol, request.encode(), timeouts);
}

std::string_view notice_failure_text(int nrequest) {
    switch (nrequest) {
    case bounce_cmd::flush:
        return "bounce";
    case bounce_cmd::warn:
        return "delay warning";
    case bounce_cmd::verp:
        return "verp";
    case bounce_cmd::trace:
        return "trace";
    }
    return "notice";
}

} // namespace cqmgr::protocol
