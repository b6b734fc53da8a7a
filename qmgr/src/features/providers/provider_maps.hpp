// cqmgr_provider_maps: which provider a destination belongs to.  A list of
// lookup tables in Postfix's syntax: inline:, texthash: and static: (read
// by conf::LookupTables), pcre: and regexp: (RegexTable, matched
// boundedly).  A key is a recipient domain (the destination's name: the
// domain belongs to the provider without DNS) or an MX host name, tried
// whole and then by each parent suffix with its leading dot (the DNS path,
// which looks up the destination's MX hosts).  The value is the provider's
// name: letters, digits, '.', '-' and '_', at most max_provider_name
// bytes; another value is warned about and is no answer.
#pragma once

#include "table_list.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

// The longest provider name: it is a label of metrics and part of a Redis
// key.
inline constexpr size_t max_provider_name = 64;

class ProviderMaps {
  public:
    using Warn = std::function<void(const std::string&)>;

    ProviderMaps() = default;
    // Opens the tables of `specs` (read now: call before the jail).  Throws
    // conf::ConfigError naming a table that cannot be read or whose type is
    // not supported.
    static ProviderMaps open(const std::vector<std::string>& specs, Warn warn);

    // True when no table is named: no destination belongs to a provider.
    bool empty() const { return tables_.empty(); }
    // The provider of `key` (a domain, or an MX host name or suffix): the
    // first table's answer that is a valid name.
    std::optional<std::string> find(std::string_view key) const;
    // The provider a destination named `domain` belongs to by its name
    // alone (no DNS): `domain` itself, without the brackets of a literal
    // nexthop or a port, is the key.
    std::optional<std::string> provider_of_domain(std::string_view domain) const;

    // Whether `name` may name a provider.
    static bool valid_name(std::string_view name);

  private:
    TableList tables_;
};

} // namespace cqmgr::qmgr
