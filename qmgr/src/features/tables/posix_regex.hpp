// A `regexp:` table's pattern, a POSIX extended regular expression as the
// GNU C library's regcomp(3) reads it (Postfix compiles regexp: tables with
// REG_EXTENDED), rewritten as a PCRE2 pattern that matches exactly the same
// subjects, so that cqmgr can match it under PCRE2's match limit
// (regex_table.hpp) instead of with regexec(3), which has no limit on its
// work.  Whether a subject matches is all a lookup table asks: POSIX's
// leftmost-longest rule and PCRE2's leftmost-first one find a match at the
// same subjects, so only the syntax needs translating.
//
// What is translated: literals, `.`, `^`, `$`, groups, `|`, the
// quantifiers `* + ? {m} {m,} {m,n} {,n}` (stacked ones too: ERE's `a+?`
// is `(a+)?`, not PCRE2's lazy `a+?`), bracket expressions with ranges and
// the twelve `[:class:]` names, back-references `\1`-`\9` and the GNU
// operators `\w \W \s \S \b \B \< \> \` \'`, with or without REG_ICASE and
// REG_NEWLINE.  Anything else (collating elements `[.x.]` and equivalence
// classes `[=x=]`, a quantifier where regcomp would take it as a literal or
// refuse it, an unmatched `(`, a range whose ends are not both digits, both
// lower-case or both upper-case letters, a `^` after or a `$` before
// something the same match consumes, an escaped lower-case letter with
// REG_ICASE, a NUL byte) is not translated: the caller keeps regcomp(3)
// for that pattern.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

// The PCRE2 pattern to compile with the returned options (newline: LF) for
// the ERE `pattern` as regcomp(3) compiles it with REG_ICASE when
// `caseless` and REG_NEWLINE when `newline`, or nothing when the pattern is
// not translated.
struct PosixTranslation {
    std::string pattern;
    uint32_t options = 0;
};
std::optional<PosixTranslation> posix_to_pcre2(std::string_view pattern, bool caseless,
                                               bool newline);

} // namespace cqmgr::qmgr
