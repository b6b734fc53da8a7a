// The list of lookup tables one of cqmgr's own parameters names (AnyTable
// each: inline:, texthash:, static:, pcre:, regexp:), as the priority
// lanes' and the sender limits' parameters do.  A key is asked of every
// table in turn; the caller's parser checks each answer, and an answer it
// refuses is warned about under the parameter's name and the next table
// asked, as Postfix skips a bad table result.  A list matched against a
// message's header lines (find_in_headers) is matched as header_checks
// is: each logical line of the primary header block in order, the first
// line that gets a good answer wins, and the lines share one MatchBudget,
// so that a header block of up to 64 KiB made to defeat a pattern costs a
// few limits' work at most.
#pragma once

#include "any_table.hpp"

#include <cctype>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cqmgr::qmgr {

// A table's answer without its surrounding blanks, which are not part of
// a name or a word the parsers take.
inline std::string_view trim_blanks(std::string_view answer) {
    auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!answer.empty() && blank(answer.front()))
        answer.remove_prefix(1);
    while (!answer.empty() && blank(answer.back()))
        answer.remove_suffix(1);
    return answer;
}

class TableList {
  public:
    using Warn = std::function<void(const std::string&)>;

    TableList() = default;
    // Opens the tables of `specs` (read now: call before the jail).  Every
    // warning, of reading a table or of a rule that hits its matching
    // limit later, starts with "PARAM: ".  Throws conf::ConfigError naming
    // a table that cannot be read or whose type is not supported.
    static TableList open(const std::vector<std::string>& specs, std::string param, Warn warn);

    // True when the parameter names no table.
    bool empty() const { return tables_.empty(); }

    // What `parse(answer, why)` makes of the first answer for `key` that it
    // takes (an std::optional); an answer it refuses (nothing returned,
    // `why` set) is warned about as "PARAM: KEY: WHY".  The regular-
    // expression tables' limit hits are charged to `budget`.
    template <class Parse>
    auto find(std::string_view key, MatchBudget& budget, const Parse& parse) const
        -> std::invoke_result_t<const Parse&, const std::string&, std::string&> {
        for (const AnyTable& t : tables_) {
            std::optional<std::string> answer = table_find(t, key, budget);
            if (!answer) continue;
            std::string why;
            if (auto v = parse(*answer, why)) return v;
            refused(key, why);
        }
        return std::nullopt;
    }
    // The same for each header line in turn, until one gets an answer
    // `parse` takes or the lines' budget is spent.
    template <class Parse>
    auto find_in_headers(const std::vector<std::string>& lines, const Parse& parse) const
        -> std::invoke_result_t<const Parse&, const std::string&, std::string&> {
        MatchBudget budget; // one for the header block
        for (const auto& line : lines) {
            if (budget.spent()) break;
            if (auto v = find(line, budget, parse)) return v;
        }
        return std::nullopt;
    }
    // The first table's answer for `key`, as it stands, even one no parser
    // would take: what `postmap -q key table` prints.
    std::optional<std::string> answer(std::string_view key) const;

    // Rules of the pcre: and regexp: tables that hit their matching limit
    // so far (regex_table.hpp).
    uint64_t limit_hits() const;

  private:
    // Warns of an answer for `key` that was refused for `why`.
    void refused(std::string_view key, const std::string& why) const;

    std::vector<AnyTable> tables_;
    std::string param_;
    Warn warn_;
};

} // namespace cqmgr::qmgr
