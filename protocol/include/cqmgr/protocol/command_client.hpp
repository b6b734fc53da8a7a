// The one-shot exchange behind Postfix's mail_command_client() and abounce:
// connect to a service socket, check the server's announcement, send one
// request list, read one reply list that starts with `status`, close.
// bounce/defer/trace appends and notices, verify updates and flush requests
// all have this shape; status_client.hpp and flush_client.hpp wrap it with
// typed requests (and, for the tests, cqmgr/test/verify_client.hpp).
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/attr.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace cqmgr::protocol {

// A deadline for each step of the exchange.
struct CommandTimeouts {
    using Duration = std::chrono::steady_clock::duration;
    Duration connect = std::chrono::seconds(60);
    Duration announce = std::chrono::seconds(60);
    Duration write = std::chrono::seconds(60);
    Duration reply = std::chrono::seconds(60);

    // mail_command_client() (synchronous appends, verify, flush): every step
    // is bounded by the stream's ipc_timeout, which qmgr sets to
    // qmgr_ipc_timeout (default 60 s).
    static CommandTimeouts ipc(Duration qmgr_ipc_timeout) {
        return {qmgr_ipc_timeout, qmgr_ipc_timeout, qmgr_ipc_timeout, qmgr_ipc_timeout};
    }
    // abounce (the end-of-message flush, warn and trace requests): the
    // announcement and the reply may each take up to 1000 s.
    static CommandTimeouts notice(Duration qmgr_ipc_timeout) {
        return {qmgr_ipc_timeout, std::chrono::seconds(1000), qmgr_ipc_timeout,
                std::chrono::seconds(1000)};
    }
};

// How strictly the reply is checked.
enum class ReplyShape {
    status_only,  // exactly one attribute, `status` (mail_command_client, abounce)
    status_first, // `status` first, anything after it is kept (verify_clnt)
};

struct CommandResult {
    // True when the exchange completed and the reply carried a numeric status.
    bool completed = false;
    // The server's status; -1 when the exchange did not complete (as Postfix's
    // clients report it).
    int status = -1;
    // When !completed: which step failed and why, worded like Postfix's
    // warnings ("connect to private/defer: No such file or directory").
    std::string error;
    // The whole reply list (a verify query reply carries more than status).
    AttrList reply;

    bool ok() const { return completed && status == 0; }
};

// Runs the exchange against the socket at `path` (relative to the working
// directory, normally the queue directory: "private/defer", "public/flush").
// Never throws for I/O problems; every failure becomes an incomplete result.
awaitable<CommandResult> run_command(std::string path, std::string_view protocol,
                                     std::string request, CommandTimeouts timeouts,
                                     ReplyShape shape = ReplyShape::status_only);

} // namespace cqmgr::protocol
