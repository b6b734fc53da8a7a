// The control socket (docs/control-protocol.md): a unix stream socket in
// the queue directory, served from the event loop.  Each client's
// credentials are read with SO_PEERCRED; only the allowed user IDs are
// served.  Requests are lines, one at a time per connection; each is
// answered by the `Answer` function, synchronously, from the in-memory
// state, and the reply is written asynchronously.  Nothing here blocks the
// loop: a client that does not read its reply within `write_timeout` is
// dropped, and so is one that sends no complete request for `idle_timeout`
// (so that clients that connect and go quiet cannot hold every slot).
#pragma once

#include "cqmgr/common/result.hpp"
#include "cqmgr/protocol/asio.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace cqmgr::qmgr {

// Why the control socket cannot be served.
struct ServeError {
    enum class Kind {
        bad_path,     // empty, or too long for a unix socket
        owner_ids,    // the owner's ids could not be taken (`call` failed)
        not_a_socket, // something else is in the socket's place
        remove,       // a stale socket could not be removed
        socket,       // no socket could be made
        bind,
        listen,
    };
    Kind kind = Kind::socket;
    std::string path;
    std::string call;   // owner_ids: "setegid(N)" or "seteuid(N)"
    std::string detail; // the system's words for what failed

    // "bind PATH: Permission denied", for the warning.
    std::string message() const;
};

class ControlServer {
  public:
    // The reply line to one request line from user `uid`.
    using Answer = std::function<std::string(std::string_view line, uid_t uid)>;
    // Where warnings go (a refused user), and verbose lines (-v).
    using Warn = std::function<void(const std::string&)>;
    using Debug = std::function<void(const std::string&)>;

    struct Options {
        std::string path{};           // the socket; relative to the working directory
        std::vector<uid_t> allowed{}; // user IDs that are served
        // When running as root, the socket is made with these effective ids
        // (it is theirs from the start; their directory must let them).
        std::optional<uid_t> owner_uid{};
        std::optional<gid_t> owner_gid{};
        std::chrono::seconds write_timeout{60}; // qmgr_ipc_timeout
        // How long a client may wait before its next complete request
        // (max_idle); 0: for ever.
        std::chrono::seconds idle_timeout{100};
        size_t max_clients = 16;
        Debug debug{}; // the idle close is logged here
    };

    ControlServer(asio::io_context& io, Options options, Answer answer, Warn warn);
    ~ControlServer();
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;

    // Removes a stale socket, binds (mode 0660 through the umask, the
    // owner's ids when running as root: no chmod or chown by path, which a
    // link planted in the socket's place would redirect), listens and
    // starts accepting; or why the socket cannot be served.
    Result<void, ServeError> start();
    // Stops accepting; connections in progress finish their current reply.
    void stop();

    // Clients being served now (refused ones not counted).
    size_t clients() const;

  private:
    // The listening socket and what its connections share; it lives as
    // long as the server or any connection or pending operation, whichever
    // is longest, and stops serving when the server goes.
    class Listener;

    std::shared_ptr<Listener> listener_;
};

} // namespace cqmgr::qmgr
