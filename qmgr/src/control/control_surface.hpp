// The control socket as one part of the daemon (docs/control-protocol.md):
// the server, the dispatch of request lines, the queries, and the commands
// with their kept settings and their flush(8) requests.  The daemon's
// serve() (main.cpp) makes it once the queue manager exists and the
// process has its final identity.
// The queue manager, the scheduler's driver, hands the commands what the
// scheduler reports of their settings: their restore at start() and their
// expiry.
//
// A request's path: ControlServer reads its line, ControlDispatch parses it
// with the protocol's grammar (control/, the one check) and answers a query
// from ControlQueries or hands the parsed control::Request to
// ControlCommands, which turns a suspend or throttle into the AdminRecord
// that the scheduler and AdminState both take.
#pragma once

#include "admin_state.hpp"
#include "clock.hpp"
#include "control_commands.hpp"
#include "control_dispatch.hpp"
#include "control_flushes.hpp"
#include "control_queries.hpp"
#include "control_server.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "queue_manager.hpp"

#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>

namespace cqmgr::qmgr {

class ControlSurface {
  public:
    // The account the socket belongs to and serves besides root
    // (mail_owner).
    struct Owner {
        uid_t uid;
        gid_t gid;
    };
    // Before the jail, which has no password file: mail_owner's ids, when
    // the socket is on and the account exists.
    static std::optional<Owner> socket_owner(const conf::QmgrParams& params);

    // `store`: the state store (open_state_store()) that keeps the
    // commands' settings, or nullptr.  `version`: what `summary` says
    // answers ("cqmgr 1.2.3").
    ControlSurface(asio::io_context& io, const conf::QmgrParams& params, QueueManager& qm,
                   const FlushDomains& flush_domains, std::shared_ptr<state::Store> store,
                   const WallClock& clock, std::optional<Owner> owner, std::string version);
    ~ControlSurface();
    ControlSurface(const ControlSurface&) = delete;
    ControlSurface& operator=(const ControlSurface&) = delete;

    // Opens the socket, in the queue directory (the working directory, also
    // inside the chroot), unless cqmgr_control_socket is empty; a socket
    // that cannot be served is logged and left off.
    void start();

  private:
    asio::io_context& io_;
    const conf::QmgrParams& params_;
    QueueManager& qm_;
    std::optional<Owner> owner_;
    AdminState admin_state_;
    ControlFlushes flushes_;
    ControlCommands commands_;
    ControlQueries queries_;
    ControlDispatch dispatch_;
    std::unique_ptr<ControlServer> server_;
};

} // namespace cqmgr::qmgr
