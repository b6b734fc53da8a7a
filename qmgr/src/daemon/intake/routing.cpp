#include "routing.hpp"

#include "address.hpp"
#include "cqmgr/common/address.hpp"

#include <algorithm>
#include <strings.h>

namespace cqmgr::qmgr {

namespace {
// Case-insensitive equality (ASCII).
bool iequal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Sends the recipient to a pseudo transport with a reason, as stock's
// redirect does: the class bits no longer apply.
void redirect(Route& r, const char* transport, const char* reason) {
    r.transport = transport;
    r.nexthop = reason;
    r.flags = 0;
}
} // namespace

Route filter_route(std::string_view filter, std::string_view rcpt, const conf::QmgrParams& p) {
    Route r;
    r.address = std::string(rcpt);
    auto colon = filter.find(':');
    r.transport = std::string(filter.substr(0, colon));
    if (colon != std::string_view::npos) r.nexthop = std::string(filter.substr(colon + 1));
    if (r.nexthop.empty()) r.nexthop = p.default_filter_nexthop;
    if (r.nexthop.empty()) r.nexthop = std::string(split_address(rcpt).domain);
    if (r.nexthop.empty()) r.nexthop = p.myhostname;
    return r;
}

Route resolved_route(protocol::ResolveReply reply) {
    Route r{std::move(reply.transport), std::move(reply.nexthop), std::move(reply.recipient),
            reply.flags};
    if (reply.is_fail())
        redirect(r, "retry", "4.3.0 address resolver failure");
    else if (reply.is_error())
        redirect(r, "error", "5.1.3 bad address syntax");
    return r;
}

void apply_overrides(Route& r, const RouteContext& c, const conf::QmgrParams& p) {
    if (r.address.empty()) redirect(r, "error", "5.1.3 null recipient address");
    if (c.force_expire) redirect(r, "retry", "4.7.0 message is administratively expired");
    if ((r.flags & protocol::resolve_flag::class_local) &&
        iequal(split_address(r.address).local, p.double_bounce_sender)) {
        r.discard = true;
        return;
    }
    if (!c.ignore_defer_transports &&
        std::ranges::find(p.defer_transports, r.transport) != p.defer_transports.end())
        redirect(r, "retry", "4.3.2 deferred transport");
    if (c.verify_over_limit) redirect(r, "retry", "4.3.2 Too many address verification requests");
}

std::string strip_extension(std::string_view local, const conf::QmgrParams& p) {
    const std::string& delims = p.recipient_delimiter;
    if (delims.empty() || iequal(local, "postmaster") || iequal(local, "MAILER-DAEMON") ||
        iequal(local, p.double_bounce_sender))
        return std::string(local);
    if (delims.find('-') != std::string::npos && p.owner_request_special) {
        if (local.size() >= 6 && iequal(local.substr(0, 6), "owner-")) return std::string(local);
        if (local.size() > 8 && iequal(local.substr(local.size() - 8), "-request"))
            return std::string(local);
    }
    size_t cut = local.find_first_of(delims);
    if (cut == 0 || cut == std::string_view::npos) return std::string(local);
    return std::string(local.substr(0, cut));
}

std::string queue_name(const Route& r, bool per_recipient, const conf::QmgrParams& p) {
    if (!per_recipient || r.transport == "error" || r.transport == "retry") return lower(r.nexthop);
    return lower(strip_extension(split_address(r.address).local, p) + "@" + r.nexthop);
}

} // namespace cqmgr::qmgr
