// A message in the active queue: the scheduler's view (core::Message) plus
// what the daemon keeps: the envelope, when it became active, how it came
// in, and where it is in its life.
//
// A message's life is one explicit phase.  It is `reading` while a batch of
// recipients is read, resolved and assigned; `waiting` while its entries
// are with the scheduler and the agents; `finishing` while its end is
// worked out (notices, then removal, deferral or quarantine).  A finishing
// message that still has recipients in its file goes back to `reading`.
// Only a waiting message with no entry and no deferral record in flight
// may start finishing.
#pragma once

#include "cqmgr/core/structures.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/queuefile/envelope.hpp"

#include <algorithm>
#include <boost/intrusive/list_hook.hpp>
#include <boost/intrusive/unordered_set_hook.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

// Its place in the active queue's arrival index (arrival_index.hpp); it
// leaves the index by itself when it is destroyed.
using ArrivalHook =
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;
// Its place in the active queue's table by queue ID (message_table.hpp),
// with the hash of its ID kept alongside.
using TableHook = boost::intrusive::unordered_set_member_hook<boost::intrusive::store_hash<true>>;

// Bits of core::Message::flags (stock's "delivery problems" word), named
// where the core sets them too.
namespace message_flag = core::message_flag;

struct Message : core::Message, core::Pooled<Message> {
    enum class Phase : uint8_t { reading, waiting, finishing };

    // The small fields first: they fill the end of core::Message.
    Phase phase = Phase::reading;
    bool force_expire = false; // g+x on the queue file (postsuper -e)
    bool unthrottle = false;   // g+r on the queue file (postqueue -i)
    bool admitted = false;     // its recipients reached the scheduler (see Intake::admitted)
    int scan_flags = 0;        // flags of the scan that brought it in
    int io_pending = 0;        // deferral records qmgr itself is still writing
    queuefile::Envelope env;
    protocol::TimeVal active_arrival;
    ArrivalHook arrival_hook;
    TableHook table_hook;

    // True when nothing is left in flight and the end may be worked out.
    bool may_finish() const { return phase == Phase::waiting && refcount == 0 && io_pending == 0; }
    // Adds `d` to the destinations unless it is there.
    void add_destination(std::string d) {
        if (!destinations_) destinations_ = std::make_unique<std::vector<std::string>>();
        auto& v = *destinations_;
        if (std::find(v.begin(), v.end(), d) == v.end()) v.push_back(std::move(d));
    }
    // Where its recipients go (transport:nexthop, each once), kept only
    // for the recovery ramp and the dead backlog (deferred_index.hpp).
    const std::vector<std::string>& destinations() const {
        static const std::vector<std::string> none;
        return destinations_ ? *destinations_ : none;
    }

  private:
    // Made only when a destination is added: most daemons never do.
    std::unique_ptr<std::vector<std::string>> destinations_;
};

} // namespace cqmgr::qmgr
