// The daemon's MX source (MxSource) for Providers: a destination of a
// transport that follows MX records is looked up with the MxResolver, and
// its MX hosts are matched against cqmgr_provider_maps (provider_of()).
// Any other destination, and any lookup without a resolved answer, is
// answered "" (on its own).
#pragma once

#include "mx_resolver.hpp"
#include "mx_source.hpp"
#include "provider_maps.hpp"

#include <map>
#include <string>

namespace cqmgr::qmgr {

class MxProviderSource : public MxSource {
  public:
    // `agents`: mx_lookup_transports(), each transport that follows MX
    // records with its agent's command.  `resolver` and `maps` outlive it.
    MxProviderSource(MxResolver& resolver, const ProviderMaps& maps,
                     std::map<std::string, std::string> agents);

    // Looked up only when mx_lookup_wanted(agent, nexthop, domain); the
    // answer then comes later, on the loop, from the resolver's callback.
    void lookup(const std::string& transport, const std::string& nexthop, const std::string& domain,
                Answer answer) override;
    // From the resolver's cache alone (MxResolver::cached()).
    std::optional<std::string> cached(const std::string& transport, const std::string& nexthop,
                                      const std::string& domain) override;

  private:
    // Whether `domain` of queue (transport, nexthop) is looked up at all.
    bool wanted(const std::string& transport, const std::string& nexthop,
                const std::string& domain) const;
    // The provider of `domain` by its MX answer `a` ("" for none).
    std::string provider(const std::string& domain, const MxAnswer& a) const;

    MxResolver& resolver_;
    const ProviderMaps& maps_;
    std::map<std::string, std::string> agents_;
};

} // namespace cqmgr::qmgr
