// Where Providers learns a destination's provider by its MX hosts: an
// asynchronous lookup of the domain's MX set, matched against
// cqmgr_provider_maps by host name and parent suffix (every MX host must
// match one provider).  Providers asks once per destination queue it
// creates and never waits for the answer: the destination starts on its
// own and joins its provider when (if) the answer comes.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace cqmgr::qmgr {

class MxSource {
  public:
    // The provider that `domain`'s MX hosts all belong to, or "" for none
    // (no MX, hosts of several providers or of none, a failed or timed-out
    // lookup).  May answer at once (from a cache) or later on the event
    // loop; answers at most once per call.
    using Answer = std::function<void(const std::string& provider)>;

    virtual ~MxSource() = default;
    // `domain` is the destination's domain, `transport` and `nexthop` its
    // queue's (a source may decline, answering "", where the transport's
    // agent does not follow MX records or DNS lookups are off for it).
    virtual void lookup(const std::string& transport, const std::string& nexthop,
                        const std::string& domain, Answer answer) = 0;
    // The answer lookup() would give from a fresh cached one, now, or
    // nothing (not cached: then lookup() asks).  "" is none.  So a
    // destination born again while its MX set is known starts as a member.
    virtual std::optional<std::string>
    cached(const std::string& transport, const std::string& nexthop, const std::string& domain) {
        (void)transport, (void)nexthop, (void)domain;
        return std::nullopt;
    }
};

} // namespace cqmgr::qmgr
