#include "notices.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
// abounce's limits for the announcement and the reply.
constexpr auto notice_timeout = std::chrono::seconds(1000);
} // namespace

namespace {
// One request/reply exchange with a delivery status service; -1 on failure.
awaitable<int> status_exchange(const std::string& service, std::string request, std::string& why) {
    auto ex = co_await asio::this_coro::executor;
    auto conv = protocol::Conversation::create(ex);
    int status = -1;
    protocol::AttrList list;
    if (!co_await conv->connect("private/" + service, notice_timeout)) {
        why = "connect to private/" + service + ": " + conv->error();
    } else if (!co_await conv->read_list(list, notice_timeout)) {
        why = "private/" + service + ": " + conv->error();
    } else if (!protocol::is_announcement(list, protocol::status_protocol)) {
        why = "private/" + service + ": unexpected announcement";
    } else if (!co_await conv->write(std::move(request), notice_timeout)) {
        why = "write to private/" + service + ": " + conv->error();
    } else if (!co_await conv->read_list(list, notice_timeout)) {
        why = "private/" + service + ": " + conv->error();
    } else {
        std::string err;
        auto st = protocol::decode_status_reply(list, &err);
        if (st) status = *st;
        else why = "private/" + service + ": malformed reply: " + err;
    }
    conv->close();
    co_return status;
}
} // namespace

awaitable<int> send_deferral(std::string service, std::string queue_id, int tflags,
                             queuefile::Recipient rcpt, std::string status, std::string reason) {
    protocol::AttrWriter w;
    w.num("nrequest", protocol::bounce_cmd::append)
        .num("flags", tflags)
        .str("queue_id", queue_id)
        .str("original_recipient", rcpt.orig_rcpt)
        .str("recipient", rcpt.address)
        .lnum("offset", rcpt.offset)
        .str("dsn_orig_rcpt", rcpt.dsn_orcpt)
        .num("notify_flags", rcpt.notify_flags)
        .str("status", status)
        .str("diag_type", "")
        .str("diag_text", "")
        .str("mta_type", "")
        .str("mta_mname", "")
        .str("action", "delayed")
        .str("reason", reason)
        .end();
    std::string why;
    int st = co_await status_exchange(service, w.take(), why);
    if (!why.empty()) log::warn(why);
    co_return st;
}

awaitable<int> send_notice(std::string service, protocol::NoticeRequest req) {
    std::string why;
    int status = co_await status_exchange(service, req.encode(), why);
    if (!why.empty()) log::warn(why);
    if (status != 0 && !(req.flags & protocol::bounce_flag::clean)) {
        using namespace protocol::bounce_cmd;
        const char* what = req.nrequest == flush  ? "bounce"
                           : req.nrequest == warn ? "delay warning"
                           : req.nrequest == verp ? "verp"
                           : req.nrequest == trace ? "trace"
                                                   : "whatever";
        log::info(req.queue_id + ": status=deferred (" + what + " failed)");
    }
    co_return status;
}

} // namespace cqmgr::qmgr
