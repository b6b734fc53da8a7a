// The messages of the active queue by arrival, so that the control socket's
// `summary` names the oldest one's age without walking 20,000 messages on
// every poll.
//
// Messages are kept in buckets, one per arrival second, each an intrusive
// list (a hook in each message).  Why not one ordered tree of messages: a
// tree insert compares the new message with a dozen others, each a cache
// miss in a message far away, and that cost 2 % of the daemon's CPU on
// the flush workload.  Here adding a message touches only the small,
// hot table of seconds, and the oldest is found by walking the first
// second's bucket, which only a `summary` request does.
#pragma once

#include "cqmgr/protocol/messages.hpp"
#include "message.hpp"

#include <boost/intrusive/list.hpp>
#include <cstdint>
#include <map>
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
    // The messages that arrived in one second, in no particular order.
    using Bucket = boost::intrusive::list<
        Message, boost::intrusive::member_hook<Message, ArrivalHook, &Message::arrival_hook>,
        boost::intrusive::constant_time_size<false>>;
    // Buckets by arrival second.  A message destroyed without remove()
    // leaves its bucket by itself (auto-unlink), so a bucket may be empty
    // until the next add() or remove() of that second.
    std::map<int64_t, Bucket> by_second_;
};

} // namespace cqmgr::qmgr
