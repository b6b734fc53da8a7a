#include "cqmgr/protocol/command_client.hpp"

#include "cqmgr/protocol/conversation.hpp"
#include "cqmgr/protocol/messages.hpp"

namespace cqmgr::protocol {

awaitable<CommandResult> run_command(std::string path, std::string_view protocol,
                                     std::string request, CommandTimeouts timeouts,
                                     ReplyShape shape) {
    auto ex = co_await asio::this_coro::executor;
    auto conv = Conversation::create(ex);
    CommandResult r;
    AttrList list;
    if (!co_await conv->connect(path, timeouts.connect)) {
        r.error = "connect to " + path + ": " + conv->error();
    } else if (!co_await conv->read_list(list, timeouts.announce)) {
        r.error = "read " + path + ": " + conv->error();
    } else if (!is_announcement(list, protocol)) {
        r.error = "read " + path + ": expected protocol=" + std::string(protocol) + ", got " +
                  (list.attrs.empty()             ? std::string("an empty list")
                   : list.names_are({"protocol"}) ? "protocol=" + list.attrs[0].value
                                                  : list.describe_names());
    } else if (!co_await conv->write(std::move(request), timeouts.write)) {
        r.error = "write " + path + ": " + conv->error();
    } else if (!co_await conv->read_list(list, timeouts.reply)) {
        r.error = "write/read " + path + ": " + conv->error();
    } else {
        std::optional<int32_t> status;
        bool shape_ok =
            shape == ReplyShape::status_only
                ? list.names_are({"status"})
                : !list.attrs.empty() && list.attrs[0].name == "status" && !list.attrs[0].is_table;
        if (shape_ok) status = parse_int(list.attrs[0].value);
        if (!status) {
            r.error = "write/read " + path + ": expected " +
                      (shape == ReplyShape::status_only ? "status=<number> alone"
                                                        : "status=<number> first") +
                      ", got " +
                      (shape_ok ? "status=" + list.attrs[0].value : list.describe_names());
        } else {
            r.completed = true;
            r.status = *status;
            r.reply = std::move(list);
        }
    }
    conv->close();
    co_return r;
}

} // namespace cqmgr::protocol
