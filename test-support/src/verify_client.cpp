#include "cqmgr/test/verify_client.hpp"

#include "cqmgr/protocol/messages.hpp"

namespace cqmgr::protocol {

std::string encode_verify_update(std::string_view address, int recipient_status,
                                 std::string_view reason) {
    AttrWriter w;
    w.str("request", "update")
        .str("address", address)
        .num("recipient_status", recipient_status)
        .str("reason", reason)
        .end();
    return w.take();
}

std::string encode_verify_query(std::string_view address) {
    AttrWriter w;
    w.str("request", "query").str("address", address).end();
    return w.take();
}

awaitable<CommandResult> verify_update(std::string path, std::string address, int recipient_status,
                                       std::string reason, CommandTimeouts timeouts) {
    // verify_clnt reads the reply with ATTR_FLAG_MISSING only: extra
    // attributes after status are tolerated.
    co_return co_await run_command(std::move(path), verify_protocol,
                                   encode_verify_update(address, recipient_status, reason),
                                   timeouts, ReplyShape::status_first);
}

awaitable<VerifyQueryResult> verify_query(std::string path, std::string address,
                                          CommandTimeouts timeouts) {
    VerifyQueryResult q;
    q.result = co_await run_command(std::move(path), verify_protocol, encode_verify_query(address),
                                    timeouts, ReplyShape::status_first);
    if (!q.result.completed) co_return q;
    const auto& reply = q.result.reply;
    if (!reply.names_are({"status", "recipient_status", "reason"})) {
        q.result.completed = false;
        q.result.error = "expected status, recipient_status, reason; got " + reply.describe_names();
        co_return q;
    }
    auto rs = parse_int(reply.attrs[1].value);
    if (!rs) {
        q.result.completed = false;
        q.result.error =
            "expected a number for recipient_status, got \"" + reply.attrs[1].value + "\"";
        co_return q;
    }
    q.recipient_status = *rs;
    q.reason = reply.attrs[2].value;
    co_return q;
}

} // namespace cqmgr::protocol
