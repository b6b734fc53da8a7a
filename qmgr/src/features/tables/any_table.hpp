// A table of one of cqmgr's own parameters that may be of any type cqmgr
// reads: an indexed one (inline:, texthash:, static:; conf::LookupTables) or
// a regular-expression one (pcre:, regexp:; RegexTable), as the priority
// lanes' and the sender limits' tables are.
#pragma once

#include "cqmgr/conf/lookup_table.hpp"
#include "regex_table.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

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

} // namespace cqmgr::qmgr
