// Where one recipient goes before the scheduler sees it, decided as stock
// qmgr decides while it resolves a message: the content filter or the
// resolver's answer first, then qmgr's overrides in stock's order (a null
// recipient bounces, a force-expired message goes to retry, mail for the
// local double-bounce address is discarded, defer_transports and the
// address verification limit defer), and last the name of the
// per-destination queue.  Pure functions: the daemon resolves, these decide.
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/protocol/messages.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

struct Route {
    std::string transport;
    std::string nexthop;
    std::string address;  // the recipient, as the resolver rewrote it
    int flags = 0;        // the resolver's class bits; an override clears them
    bool discard = false; // the local double-bounce address: discarded, marked done
};

// What of a message, besides the recipient, changes its route.
struct RouteContext {
    bool force_expire = false;            // postsuper -e
    bool ignore_defer_transports = false; // an F trigger, or the message was flushed on its own
    bool verify_over_limit = false;       // an address probe while too many are pending
};

// The route of a content filter "transport[:nexthop]" for `rcpt`: without a
// nexthop, default_filter_nexthop, else the recipient's domain, else
// myhostname.
Route filter_route(std::string_view filter, std::string_view rcpt, const conf::QmgrParams& p);

// The route the resolver's answer gives: a lookup failure goes to retry,
// bad syntax to error.  Takes the reply's strings.
Route resolved_route(protocol::ResolveReply reply);

// Applies qmgr's overrides to `r`, in stock's order.
void apply_overrides(Route& r, const RouteContext& c, const conf::QmgrParams& p);

// The local part of `local` without its address extension, as Postfix's
// split_addr() cuts it: not for postmaster, MAILER-DAEMON and the
// double-bounce sender (any case), nor, when the delimiters include '-' and
// owner_request_special is on, for owner-* and *-request (any case); and
// never down to nothing.
std::string strip_extension(std::string_view local, const conf::QmgrParams& p);

// The name of the destination queue: the nexthop in lower case, or, for a
// transport that takes one recipient per delivery, localpart@nexthop (the
// local part without its extension), so each recipient gets a queue.
std::string queue_name(const Route& r, bool per_recipient, const conf::QmgrParams& p);

} // namespace cqmgr::qmgr
