// A Postfix regular-expression lookup table, `pcre:/path` or
// `regexp:/path`, as the admin writes it for the adaptive limits' reply
// rules (cqmgr_adaptive_reply_rules): one rule a logical line,
// `/pattern/flags result` or `!/pattern/flags result`, tried in order; the
// first that matches gives its result.  Case-insensitive unless the `i`
// flag toggles it, as in Postfix.  `pcre:` patterns are PCRE2, `regexp:`
// patterns POSIX extended expressions.  Not supported: if/endif blocks and
// $number substitution in results (a warning names the line; the line is
// skipped).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

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

    // The result of the first rule that matches `key`, if any.
    std::optional<std::string> find(std::string_view key) const;
    size_t size() const { return rules_.size(); }

    // One compiled pattern (PCRE2 or POSIX).
    struct Pattern;

  private:
    RegexTable() = default;
    struct Rule {
        std::unique_ptr<Pattern> pattern;
        bool negate = false;
        std::string result;
    };
    std::vector<Rule> rules_;
};

} // namespace cqmgr::qmgr
