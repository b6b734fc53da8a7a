// cqmgr_provider_maps (see provider_maps.hpp).
#include "provider_maps.hpp"

#include "cqmgr/conf/config_error.hpp"

#include <algorithm>
#include <cctype>
#include <type_traits>

namespace cqmgr::qmgr {

bool ProviderMaps::valid_name(std::string_view name) {
    if (name.empty() || name.size() > max_provider_name) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    });
}

ProviderMaps ProviderMaps::open(const std::vector<std::string>& specs, Warn warn) {
    ProviderMaps out;
    out.warn_ = std::move(warn);
    auto warn_as = [&out](const std::string& w) {
        if (out.warn_) out.warn_("cqmgr_provider_maps: " + w);
    };
    for (const std::string& spec : specs) {
        if (spec.starts_with("pcre:") || spec.starts_with("regexp:")) {
            auto t = RegexTable::open(spec, warn_as);
            if (!t) throw conf::ConfigError({}, "open table " + spec + ": cannot be read");
            t->warn_on_limit(warn_as);
            out.tables_.emplace_back(std::move(*t));
        } else {
            out.tables_.emplace_back(conf::LookupTables::open({spec}));
        }
    }
    return out;
}

std::optional<std::string> ProviderMaps::find(std::string_view key) const {
    if (key.empty()) return std::nullopt;
    for (const Table& t : tables_) {
        std::optional<std::string> answer =
            std::visit([&](const auto& table) { return table.find(key); }, t);
        if (!answer) continue;
        // Surrounding blanks are not part of the name.
        std::string_view a = *answer;
        while (!a.empty() && std::isspace(static_cast<unsigned char>(a.front())))
            a.remove_prefix(1);
        while (!a.empty() && std::isspace(static_cast<unsigned char>(a.back())))
            a.remove_suffix(1);
        if (valid_name(a)) return std::string(a);
        if (warn_)
            warn_("cqmgr_provider_maps: " + std::string(key) + ": bad provider name \"" + *answer +
                  "\" (letters, digits, '.', '-' and '_', at most " +
                  std::to_string(max_provider_name) + ")");
    }
    return std::nullopt;
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
