// Which priority lane a message takes (cqmgr_priority_maps,
// cqmgr_priority_header_maps; the scheduler's side is in
// qmgr/core/src/lanes.cpp).
//
// cqmgr_priority_maps is a list of lookup tables in Postfix's syntax:
// inline:, texthash: and static: (read by conf::LookupTables), pcre: and
// regexp: (RegexTable).  It is queried with the sender address, then the
// sender's domain, then each recipient's domain (of the first batch of
// recipients, in file order), each key in every table in turn; the first
// answer wins.  cqmgr_priority_header_maps is matched, like header_checks,
// against each logical line of the message's primary header block, only
// when the envelope gave no answer.  An answer is "urgent", "normal" or
// "bulk" (any case); another answer is warned about and skipped.  pcre:
// and regexp: tables match boundedly (regex_table.hpp): the envelope's keys
// share one MatchBudget, and so do the header lines.
#pragma once

#include "cqmgr/core/structures.hpp"
#include "table_list.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

class PriorityTables {
  public:
    using Warn = std::function<void(const std::string&)>;

    PriorityTables() = default;
    // Opens the tables of both parameters (read now: call before the jail).
    // Throws conf::ConfigError naming a table that cannot be read or whose
    // type is not supported.
    static PriorityTables open(const std::vector<std::string>& maps,
                               const std::vector<std::string>& header_maps, Warn warn);

    // True when neither parameter names a table: every message is normal.
    bool empty() const { return maps_.empty() && header_maps_.empty(); }
    // True when classifying may need the message's header lines.
    bool wants_headers() const { return !header_maps_.empty(); }

    // The lane the envelope gives: the sender address, its domain, then
    // each recipient domain in `rcpt_domains`; nothing when no table answers.
    std::optional<core::Lane> classify(std::string_view sender,
                                       const std::vector<std::string>& rcpt_domains) const;
    // The answer of the first table of cqmgr_priority_maps (with `header`,
    // of cqmgr_priority_header_maps) that has `key`, as it stands, even
    // when it is not a class: what `postmap -q key table` prints.
    std::optional<std::string> answer(std::string_view key, bool header = false) const;
    // The lane the first header line that matches gives, if any.
    std::optional<core::Lane> classify_headers(const std::vector<std::string>& lines) const;

    // Rules of the pcre: and regexp: tables that hit their matching limit
    // so far (regex_table.hpp).
    uint64_t limit_hits() const;

    // "urgent", "normal" or "bulk" (any case, surrounding blanks ignored).
    static std::optional<core::Lane> parse(std::string_view answer);

  private:
    // The lane `answer` names; `why` says what is wrong with another.
    static std::optional<core::Lane> lane_of(const std::string& answer, std::string& why);

    TableList maps_;
    TableList header_maps_;
};

} // namespace cqmgr::qmgr
