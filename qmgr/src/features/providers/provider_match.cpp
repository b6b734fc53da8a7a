// Providers by domain and MX set, and the nexthops that are looked up (see
// provider_match.hpp).
#include "provider_match.hpp"

#include "address.hpp"
#include "mx_answer.hpp"

namespace cqmgr::qmgr {

namespace {

// `s` lowercased, without one trailing dot.
std::string normal(std::string_view s) {
    std::string out = lower(s);
    if (!out.empty() && out.back() == '.') out.pop_back();
    return out;
}

// The provider of one MX host: its most specific key that the table lists.
std::optional<std::string> host_provider(std::string_view host, const ProviderLookup& lookup) {
    for (const std::string& key : mx_host_keys(host))
        if (auto p = lookup(key)) return p;
    return std::nullopt;
}

// True for a name whose last label is all digits: an IPv4 address (or
// something no MX lookup finds), not a domain.
bool numeric_tld(std::string_view name) {
    size_t dot = name.rfind('.');
    std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
    return !last.empty() && last.find_first_not_of("0123456789") == std::string_view::npos;
}

} // namespace

std::vector<std::string> mx_host_keys(std::string_view host) {
    std::string name = normal(host);
    std::vector<std::string> keys;
    if (name.empty()) return keys;
    keys.push_back(name);
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
        if (dot + 1 < name.size()) keys.push_back(name.substr(dot));
    return keys;
}

std::optional<std::string> provider_of(std::string_view domain,
                                       std::span<const std::string> mx_hosts,
                                       const ProviderLookup& lookup) {
    std::string d = normal(domain);
    if (!d.empty())
        if (auto p = lookup(d)) return p;
    if (mx_hosts.empty()) return std::nullopt;
    std::optional<std::string> provider;
    for (const std::string& host : mx_hosts) {
        auto p = host_provider(host, lookup);
        if (!p || (provider && *provider != *p)) return std::nullopt;
        provider = std::move(p);
    }
    return provider;
}

bool mx_lookup_wanted(std::string_view agent, std::string_view nexthop,
                      std::string_view recipient_domain) {
    if (agent != "smtp") return false;
    // mx_lookup_key() refuses brackets, ':', ',', blanks and the rest that
    // is not a plain host name.
    std::string key = mx_lookup_key(nexthop);
    return !key.empty() && !numeric_tld(key) && key == normal(recipient_domain);
}

} // namespace cqmgr::qmgr
