// The flush(8) requests of the control socket's flush commands: for a site
// that fast_flush_domains covers, flush(8) is asked to deliver its deferred
// mail, as `postqueue -s` asks.  A site already asked for and not answered
// yet is asked once; beyond 64 sites waiting, a flush's deferred part is
// refused rather than queued.  Each request takes one of the queue
// manager's service slots, like every connection qmgr opens for itself.
#pragma once

#include "control_commands.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/protocol/asio.hpp"
#include "fast_flush.hpp"
#include "service_slots.hpp"

#include <string>
#include <unordered_set>

namespace cqmgr::qmgr {

class ControlFlushes {
  public:
    ControlFlushes(asio::io_context& io, const conf::QmgrParams& params,
                   const FlushDomains& domains, ServiceSlots& slots)
        : io_(io), params_(params), domains_(domains), slots_(slots) {}

    // Asks flush(8) for `site`'s deferred mail, when fast_flush_domains
    // covers it (the answer comes later; a failure is logged), and says
    // what became of it.
    ControlCommands::FlushDeferred ask(const std::string& site);

  private:
    // The request for `site`, and its end.
    awaitable<void> request(std::string site);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const FlushDomains& domains_;
    ServiceSlots& slots_;
    // The sites asked for and not answered yet.
    std::unordered_set<std::string> waiting_;
};

} // namespace cqmgr::qmgr
