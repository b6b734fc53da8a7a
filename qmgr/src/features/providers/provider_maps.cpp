// cqmgr_provider_maps (see provider_maps.hpp).
#include "provider_maps.hpp"

#include <algorithm>
#include <cctype>

namespace cqmgr::qmgr {

bool ProviderMaps::valid_name(std::string_view name) {
    if (name.empty() || name.size() > max_provider_name) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    });
}

ProviderMaps ProviderMaps::open(const std::vector<std::string>& specs, Warn warn) {
    ProviderMaps out;
    out.tables_ = TableList::open(specs, "cqmgr_provider_maps", std::move(warn));
    return out;
}

std::optional<std::string> ProviderMaps::find(std::string_view key) const {
    if (key.empty()) return std::nullopt;
    MatchBudget budget; // one for the key's tables
    return tables_.find(key, budget, [](const std::string& answer, std::string& why) {
        std::string_view a = trim_blanks(answer);
        std::optional<std::string> name;
        if (valid_name(a))
            name = std::string(a);
        else
            why = "bad provider name \"" + answer +
                  "\" (letters, digits, '.', '-' and '_', at most " +
                  std::to_string(max_provider_name) + ")";
        return name;
    });
}

std::optional<std::string> ProviderMaps::provider_of_domain(std::string_view domain) const {
    if (tables_.empty()) return std::nullopt;
    // A nexthop may carry a port (example.com:25) or be a literal
    // ([mx.example.com]): the domain is the name within.
    if (auto colon = domain.find(':'); colon != std::string_view::npos)
        domain = domain.substr(0, colon);
    if (domain.size() >= 2 && domain.front() == '[' && domain.back() == ']')
        domain = domain.substr(1, domain.size() - 2);
    return find(domain);
}

} // namespace cqmgr::qmgr
