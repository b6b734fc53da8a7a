// A table of one of cqmgr's own parameters that may be of any type cqmgr
// reads: an indexed one (inline:, texthash:, static:; conf::LookupTables) or
// a regular-expression one (pcre:, regexp:; RegexTable), as the priority
// lanes' and the sender limits' tables are.
#pragma once

#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/lookup_table.hpp"
#include "regex_table.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace cqmgr::qmgr {

using AnyTable = std::variant<conf::LookupTables, RegexTable>;

// The answer of `table` for `key`; a regular-expression table's matching
// limit hits are charged to `budget` (regex_table.hpp).
inline std::optional<std::string> table_find(const AnyTable& table, std::string_view key,
                                             MatchBudget& budget) {
    return std::visit(
        [&](const auto& t) {
            if constexpr (std::is_same_v<std::decay_t<decltype(t)>, RegexTable>)
                return t.find(key, budget);
            else
                return t.find(key);
        },
        table);
}

// Opens the tables of a parameter's list, in order (before the jail): a
// regular-expression table warns through `warn` (its bad lines, its
// matching limit hits).  Throws conf::ConfigError naming a table that
// cannot be read or whose type is not supported.
inline std::vector<AnyTable> open_any_tables(const std::vector<std::string>& specs,
                                             const RegexTable::Warn& warn) {
    std::vector<AnyTable> out;
    for (const std::string& spec : specs) {
        if (spec.starts_with("pcre:") || spec.starts_with("regexp:")) {
            auto t = RegexTable::open(spec, warn);
            if (!t) throw conf::ConfigError({}, "open table " + spec + ": cannot be read");
            t->warn_on_limit(warn);
            out.emplace_back(std::move(*t));
        } else {
            out.emplace_back(conf::LookupTables::open({spec}));
        }
    }
    return out;
}

} // namespace cqmgr::qmgr
