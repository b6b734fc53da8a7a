// Which provider a destination belongs to, from its domain and its MX set,
// and which nexthops are never looked up: pure policy, no I/O.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

// cqmgr_provider_maps as provider_of() asks it: a key (a domain, an MX host
// name, or a parent suffix with its leading dot, all lowercased) to a
// provider name, or nothing.
using ProviderLookup = std::function<std::optional<std::string>(std::string_view key)>;

// The keys an MX host name is tried with, most specific first: the whole
// name, then each parent suffix with its leading dot, e.g. for
// mx1.l.google.com: mx1.l.google.com, .l.google.com, .google.com, .com.
// `host` is lowercased and its trailing dot dropped first.
std::vector<std::string> mx_host_keys(std::string_view host);

// The provider of the destination `domain` whose MX hosts are `mx_hosts`
// (MxAnswer::hosts: for a domain without MX records, the domain itself):
//  - the domain itself (whole, lowercased) listed in the table: that
//    provider, whatever its MX hosts;
//  - else, when there is at least one host and every host matches (by its
//    most specific key of mx_host_keys()) and all give the same provider:
//    that provider;
//  - else none: one host outside every provider, or two providers, or no
//    host at all (a null MX, or no answer), leave the destination on its
//    own.
std::optional<std::string> provider_of(std::string_view domain,
                                       std::span<const std::string> mx_hosts,
                                       const ProviderLookup& lookup);

// True when a recipient's nexthop is looked up for its MX set, i.e. when
// smtp(8) itself would look up MX records of the recipient's domain:
//  - `agent` is the transport's delivery agent, the command field of its
//    master.cf line: only "smtp" (the smtp and relay transports).  lmtp,
//    local, virtual, pipe, error, discard and the rest deliver elsewhere
//    than where the domain's MX records point, and are never looked up;
//  - `nexthop` (trivial-rewrite's nexthop) is the recipient's domain
//    itself, compared without case and trailing dot.  A relayhost, a
//    transport_maps or sender-dependent nexthop that names another host
//    is a route the admin chose, not the domain's MX set;
//  - and it is a plain host name: not in brackets ([host] is used as it
//    is, without MX lookup), no port (":port" is set only by a route the
//    admin chose, as above), not a list of nexthops, not an address.
bool mx_lookup_wanted(std::string_view agent, std::string_view nexthop,
                      std::string_view recipient_domain);

} // namespace cqmgr::qmgr
