// The daemon's MX source (see mx_provider_source.hpp).
#include "mx_provider_source.hpp"

#include "provider_match.hpp"

namespace cqmgr::qmgr {

MxProviderSource::MxProviderSource(MxResolver& resolver, const ProviderMaps& maps,
                                   std::map<std::string, std::string> agents)
    : resolver_(resolver), maps_(maps), agents_(std::move(agents)) {}

bool MxProviderSource::wanted(const std::string& transport, const std::string& nexthop,
                              const std::string& domain) const {
    auto agent = agents_.find(transport);
    return agent != agents_.end() && mx_lookup_wanted(agent->second, nexthop, domain);
}

std::string MxProviderSource::provider(const std::string& domain, const MxAnswer& a) const {
    if (!a.resolved()) return {};
    auto p = provider_of(domain, a.hosts, [this](std::string_view key) { return maps_.find(key); });
    return p ? *p : std::string();
}

void MxProviderSource::lookup(const std::string& transport, const std::string& nexthop,
                              const std::string& domain, Answer answer) {
    if (!wanted(transport, nexthop, domain)) return answer("");
    resolver_.lookup(domain, [this, domain, answer = std::move(answer)](const MxAnswer& a) {
        answer(provider(domain, a));
    });
}

std::optional<std::string> MxProviderSource::cached(const std::string& transport,
                                                    const std::string& nexthop,
                                                    const std::string& domain) {
    if (!wanted(transport, nexthop, domain)) return std::string();
    const MxAnswer* a = resolver_.cached(domain);
    if (!a) return std::nullopt;
    return provider(domain, *a);
}

} // namespace cqmgr::qmgr
