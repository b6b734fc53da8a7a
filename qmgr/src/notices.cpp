#include "notices.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
// abounce's limits for the announcement and the reply.
constexpr auto notice_timeout = std::chrono::seconds(1000);
} // namespace

awaitable<int> send_notice(std::string service, protocol::NoticeRequest req) {
    auto ex = co_await asio::this_coro::executor;
    auto conv = protocol::Conversation::create(ex);
    int status = -1;
    std::string why;
    protocol::AttrList list;
    if (!co_await conv->connect("private/" + service, notice_timeout)) {
        why = "connect to private/" + service + ": " + conv->error();
    } else if (!co_await conv->read_list(list, notice_timeout)) {
        why = "private/" + service + ": " + conv->error();
    } else if (!protocol::is_announcement(list, protocol::status_protocol)) {
        why = "private/" + service + ": unexpected announcement";
    } else if (!co_await conv->write(req.encode(), notice_timeout)) {
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
