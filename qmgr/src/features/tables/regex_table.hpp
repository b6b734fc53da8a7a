// A Postfix regular-expression lookup table, `pcre:/path` or
// `regexp:/path`, as the admin writes it for the adaptive limits' reply
// rules (cqmgr_adaptive_reply_rules) and the priority lanes' tables: one
// rule a logical line, `/pattern/flags result` or `!/pattern/flags result`,
// tried in order; the first that matches gives its result.
// Case-insensitive unless the `i` flag toggles it, as in Postfix.  `pcre:`
// patterns are PCRE2, `regexp:` patterns POSIX extended expressions.  Not
// supported: if/endif blocks and $number substitution in results (a
// warning names the line; the line is skipped).
//
// Matching is bounded (docs/design.md, "Bounded matching"): the subjects
// are remote or sender-controlled text (a receiver's reply, a header
// line), matched on the event loop.  A subject is cut at max_subject
// bytes; every pattern runs under PCRE2's match and depth limits, JIT-
// compiled where PCRE2 can (a `regexp:` pattern is rewritten for PCRE2,
// posix_regex.hpp; the few it cannot rewrite keep regcomp(3) and only the
// cut); a rule whose matching hits a limit counts as no match, with a
// rate-limited warning, as Postfix's pcre: tables treat their backtracking
// limit; and a MatchBudget stops a lookup (or several) after a few such
// hits.
#pragma once

#include "warning_limiter.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

// How much of a subject the rules see: one SMTP reply line at most
// (RFC 5321 allows 512 bytes with its code), and well past the words that
// name a limit or a lane, which come first (docs/admin-guide.md).
inline constexpr size_t max_subject = 512;
// PCRE2's match limit per pattern and subject: about 0.1 ms of work with
// JIT, about 1 ms without, and far more than a rule needs on max_subject
// bytes of real text.
inline constexpr uint32_t regex_match_limit = 100'000;
// The same for a pattern with back-references, one step of which compares
// up to a subject's length: about 0.2 ms with JIT.
inline constexpr uint32_t regex_backref_match_limit = 10'000;
// PCRE2's depth limit (backtracking frames without JIT; memory).
inline constexpr uint32_t regex_depth_limit = 5'000;

// The limit hits one lookup, or a set of lookups that belong together (a
// reply's admin and default rules, a message's header lines, a delivery's
// recipients), may spend before the rest of its rules are not matched.
struct MatchBudget {
    static constexpr int default_hits = 4;
    int hits_left = default_hits;
    bool spent() const { return hits_left <= 0; }
};

class RegexTable {
  public:
    using Warn = std::function<void(const std::string&)>;

    // Reads the table that `spec` names ("pcre:/etc/postfix/reply_rules").
    // Returns nothing (after a warning) for another table type or a file
    // that cannot be read; a bad line is warned about and skipped.
    static std::optional<RegexTable> open(const std::string& spec, const Warn& warn);
    // Parses table text of `type` "pcre" or "regexp"; `name` is used in
    // warnings (e.g. the file name).
    static RegexTable parse(const std::string& type, const std::string& name, std::string_view text,
                            const Warn& warn);

    RegexTable(RegexTable&&) noexcept;
    RegexTable& operator=(RegexTable&&) noexcept;
    ~RegexTable();

    // The result of the first rule that matches `key` (its first
    // max_subject bytes), if any; `budget` is charged for each rule that
    // hits a limit, and once it is spent no further rule is matched.
    std::optional<std::string> find(std::string_view key, MatchBudget& budget) const;
    // The same with a budget of its own.
    std::optional<std::string> find(std::string_view key) const;
    // The rule that matched: its place in the table (0 for the first),
    // the line it is on and its result.
    struct Hit {
        size_t index = 0;
        int line = 0;
        const std::string* result = nullptr;
    };
    // As find(), with the rule that matched.
    std::optional<Hit> match(std::string_view key, MatchBudget& budget) const;
    size_t size() const { return rules_.size(); }
    // The result and line of the rule at `index` (< size()).
    const std::string& result(size_t index) const { return rules_[index].result; }
    int line(size_t index) const { return rules_[index].line; }
    // "pcre:/etc/postfix/reply_rules", as warnings name the table.
    const std::string& label() const { return label_; }

    // Who is told, at most once a minute per rule, that a rule hit a limit
    // (the table's parse-time `warn` is for reading it).
    void warn_on_limit(Warn warn) { limit_warn_ = std::move(warn); }
    // Rules that hit a limit so far (each time counts).
    uint64_t limit_hits() const { return limit_hits_; }
    // Rules whose pattern is matched by regcomp(3), without PCRE2's limits.
    size_t unbounded_rules() const;

    // One compiled pattern (PCRE2 or POSIX).
    struct Pattern;

  private:
    RegexTable() = default;
    struct Rule {
        std::unique_ptr<Pattern> pattern;
        bool negate = false;
        std::string result;
        int line = 0;
    };
    // A rule of this table hit a limit while matching.
    void limit_hit(const Rule& rule) const;

    std::string label_; // "pcre:/etc/postfix/reply_rules"
    std::vector<Rule> rules_;
    Warn limit_warn_;
    mutable uint64_t limit_hits_ = 0;
    mutable WarningLimiter limiter_;
};

} // namespace cqmgr::qmgr
