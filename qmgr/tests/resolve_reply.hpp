// A resolve service answer made in one line, for the tests.
#pragma once

#include "cqmgr/protocol/messages.hpp"

#include <string>
#include <utility>

namespace cqmgr::qmgr::testing {

inline protocol::ResolveReply resolve_reply(std::string transport, std::string nexthop,
                                            std::string rcpt, int flags = 0) {
    protocol::ResolveReply r;
    r.transport = std::move(transport);
    r.nexthop = std::move(nexthop);
    r.recipient = std::move(rcpt);
    r.flags = flags;
    return r;
}

} // namespace cqmgr::qmgr::testing
