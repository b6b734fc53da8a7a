#include "cqmgr/protocol/flush_client.hpp"

#include "cqmgr/protocol/messages.hpp"

namespace cqmgr::protocol {

std::string encode_flush_add(std::string_view site, std::string_view queue_id) {
    AttrWriter w;
    w.str("request", "add").str("site", site).str("queue_id", queue_id).end();
    return w.take();
}

awaitable<CommandResult> flush_add(std::string path, std::string site, std::string queue_id,
                                   CommandTimeouts timeouts) {
    co_return co_await run_command(std::move(path), flush_protocol,
                                   encode_flush_add(site, queue_id), timeouts);
}

std::string encode_flush_send_site(std::string_view site) {
    AttrWriter w;
    w.str("request", "send_site").str("site", site).end();
    return w.take();
}

awaitable<CommandResult> flush_send_site(std::string path, std::string site,
                                         CommandTimeouts timeouts) {
    co_return co_await run_command(std::move(path), flush_protocol, encode_flush_send_site(site),
                                   timeouts);
}

} // namespace cqmgr::protocol
