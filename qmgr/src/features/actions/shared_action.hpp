// A reply rule's action as the hosts of a cluster share it (with
// cqmgr_redis_server; shared_actions.hpp): what one host's rule did, so
// that another can do the same with the same end: on a destination, a
// transport or a provider, or on one sender group's mail to a destination
// or a provider (the sender scopes; each host numbers the group by its
// name, as cqmgr_sender_limits makes it there).
//
// Its text on the shared board is one line of tab-separated fields:
//
//   1 SCOPE TRANSPORT NAME SINCE UNTIL HOST RULE ACTION REASON
//   2 SCOPE TRANSPORT NAME GROUP SINCE UNTIL HOST RULE ACTION REASON
//
// (1 and 2: the format, 2 for the sender scopes only, so that format 1
// reads as before; NAME is the destination or the provider, "-" for a
// transport; GROUP the sender group's name; SINCE and UNTIL are Unix
// seconds, UNTIL 0 when only N deliveries end it).  The text comes back
// from Redis, so decoding it is strict and bounded (fuzzed:
// qmgr/fuzz/fuzz_reply_action.cpp).
#pragma once

#include "reply_action.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

struct SharedAction {
    ReplyAction::Scope scope = ReplyAction::Scope::destination;
    std::string transport;
    std::string name;   // the destination (a queue's name) or the provider; "" for a transport
    std::string group;  // a sender scope's group (its name); "" for the other scopes
    int64_t since = 0;  // when the rule acted (Unix seconds)
    int64_t until = 0;  // when it ends by itself (0: after N deliveries only)
    std::string host;   // the host whose rule acted (myhostname)
    std::string rule;   // "pcre:/etc/postfix/reply_actions, line 3"
    std::string action; // the rule's result as written
    std::string reason; // the reply that made it act

    // The scope's key, as the log lines name it: "smtp:d.example", "smtp",
    // "smtp:provider yahoo", "sender campaign.example smtp:d.example".
    std::string key() const;
    // The one action it is, on every host: its key, its start and its
    // rule (the same rule acting again later is another action).
    std::string id() const;
    bool operator==(const SharedAction&) const = default;
};

// The longest text decoded, and the longest field.
inline constexpr size_t max_shared_action_text = 4096;
inline constexpr size_t max_shared_field = 1024;

std::string encode_shared_action(const SharedAction& a);
// The action in `text`, or nothing when it is not one (another format, a
// field out of bounds, a control character).
std::optional<SharedAction> decode_shared_action(std::string_view text);

} // namespace cqmgr::qmgr
