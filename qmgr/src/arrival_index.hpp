// The messages of the active queue in arrival order, so that the control
// socket's `summary` names the oldest one's age without walking 20,000
// messages on every poll.  The order is intrusive (a hook in each message),
// so keeping it costs no allocation per message.
#pragma once

#include "cqmgr/protocol/messages.hpp"
#include "message.hpp"

#include <boost/intrusive/set.hpp>
#include <optional>

namespace cqmgr::qmgr {

class ArrivalIndex {
  public:
    // Message `m` entered the active queue; it must not be here already.
    void add(Message& m);
    // Message `m`, added before, left the active queue; a message never
    // added is a broken invariant.
    void remove(Message& m);
    // The earliest arrival, if any message is active.
    std::optional<protocol::TimeVal> oldest() const;

  private:
    // Orders messages by (arrival_sec, arrival_usec); ties are allowed.
    struct ByArrival {
        bool operator()(const Message& a, const Message& b) const {
            return a.env.arrival_sec != b.env.arrival_sec ? a.env.arrival_sec < b.env.arrival_sec
                                                          : a.env.arrival_usec < b.env.arrival_usec;
        }
    };
    boost::intrusive::multiset<
        Message, boost::intrusive::member_hook<Message, ArrivalHook, &Message::arrival_hook>,
        boost::intrusive::compare<ByArrival>, boost::intrusive::constant_time_size<false>>
        order_;
};

} // namespace cqmgr::qmgr
