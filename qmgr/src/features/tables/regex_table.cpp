#include "regex_table.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include "posix_regex.hpp"

#include <ctime>
#include <fstream>
#include <pcre2.h>
#include <regex.h>
#include <sstream>

namespace cqmgr::qmgr {

namespace {

// The match context a pattern runs with: PCRE2's limits (see
// regex_table.hpp), a tighter match limit for a pattern with
// back-references (one step of theirs compares up to a subject's length);
// made once, never freed.
pcre2_match_context* bounded_context(bool backrefs) {
    auto make = [](uint32_t match_limit) {
        pcre2_match_context* c = pcre2_match_context_create(nullptr);
        pcre2_set_match_limit(c, match_limit);
        pcre2_set_depth_limit(c, regex_depth_limit);
        return c;
    };
    static pcre2_match_context* plain = make(regex_match_limit);
    static pcre2_match_context* with_backrefs = make(regex_backref_match_limit);
    return backrefs ? with_backrefs : plain;
}

} // namespace

// A compiled pattern: PCRE2 code (JIT-compiled where PCRE2 can), or a
// POSIX regex_t for a regexp: pattern that posix_to_pcre2 does not take.
struct RegexTable::Pattern {
    pcre2_code* pcre = nullptr;
    pcre2_match_data* match = nullptr;
    regex_t posix{};
    bool is_posix = false;
    bool c_string = false; // a regexp: pattern: the subject ends at a NUL, as regexec sees it
    bool backrefs = false; // the PCRE2 pattern has back-references

    ~Pattern() {
        if (match) pcre2_match_data_free(match);
        if (pcre) pcre2_code_free(pcre);
        if (is_posix) regfree(&posix);
    }
    // Whether `key` matches; nothing when a limit stopped the matching.
    std::optional<bool> matches(std::string_view key) const {
        if (c_string) key = key.substr(0, key.find('\0'));
        if (!is_posix) {
            int rc = pcre2_match(pcre, reinterpret_cast<PCRE2_SPTR>(key.data()), key.size(), 0, 0,
                                 match, bounded_context(backrefs));
            if (rc >= 0) return true;
            if (rc == PCRE2_ERROR_NOMATCH) return false;
            return std::nullopt; // the match, depth or heap limit, or JIT's stack
        }
        std::string z(key); // regexec wants a C string
        int rc = regexec(&posix, z.c_str(), 0, nullptr, 0);
        if (rc == 0) return true;
        if (rc == REG_NOMATCH) return false;
        return std::nullopt; // REG_ESPACE
    }
};

namespace {

// Splits `text` into Postfix logical lines: a line starting with white
// space continues the previous one; blank lines and lines whose first
// non-blank character is '#' are left out.  Each with its first line number.
std::vector<std::pair<int, std::string>> logical_lines(std::string_view text) {
    std::vector<std::pair<int, std::string>> out;
    std::istringstream in{std::string(text)};
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        if (first > 0 && !out.empty()) {
            out.back().second += " " + line.substr(first);
            continue;
        }
        out.emplace_back(number, line.substr(first));
    }
    return out;
}

// Compiles `translated` (PCRE2) into `p`, JIT-compiled where PCRE2 can
// (else it is interpreted, under the same limits); an error text, or empty.
std::string compile_pcre2(RegexTable::Pattern& p, const std::string& pattern, uint32_t options) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    // Newline is LF, whatever PCRE2 was built with (regcomp's REG_NEWLINE).
    static pcre2_compile_context* lf = [] {
        pcre2_compile_context* c = pcre2_compile_context_create(nullptr);
        pcre2_set_newline(c, PCRE2_NEWLINE_LF);
        return c;
    }();
    p.pcre = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                           &err, &offset, lf);
    if (!p.pcre) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        return reinterpret_cast<const char*>(buf) + std::string(" at offset ") +
               std::to_string(offset);
    }
    pcre2_jit_compile(p.pcre, PCRE2_JIT_COMPLETE);
    uint32_t backref_max = 0;
    pcre2_pattern_info(p.pcre, PCRE2_INFO_BACKREFMAX, &backref_max);
    p.backrefs = backref_max > 0;
    p.match = pcre2_match_data_create_from_pattern(p.pcre, nullptr);
    return {};
}

// Compiles `pattern` with Postfix's flags; an error text, or empty.  A
// regexp: pattern is checked by regcomp(3), as Postfix compiles it, and
// then matched with PCRE2 when posix_to_pcre2 rewrites it (and PCRE2
// takes the rewrite), else with regexec(3).
std::string compile(RegexTable::Pattern& p, bool posix, const std::string& pattern,
                    const std::string& flags) {
    bool caseless = true;
    bool extended = true;   // regexp: x toggles extended syntax
    bool multiline = false; // regexp: m toggles REG_NEWLINE
    uint32_t options = 0;
    for (char f : flags) {
        switch (f) {
        case 'i':
            caseless = !caseless;
            break;
        case 'm':
            if (posix)
                multiline = !multiline;
            else
                options |= PCRE2_MULTILINE;
            break;
        case 's':
            if (!posix) options |= PCRE2_DOTALL;
            break;
        case 'x':
            if (posix)
                extended = !extended;
            else
                options |= PCRE2_EXTENDED;
            break;
        case 'U':
            if (!posix) options |= PCRE2_UNGREEDY;
            break;
        default:
            return std::string("unsupported flag '") + f + "'";
        }
    }
    if (posix) {
        int cflags = REG_NOSUB | (caseless ? REG_ICASE : 0) | (extended ? REG_EXTENDED : 0) |
                     (multiline ? REG_NEWLINE : 0);
        int rc = regcomp(&p.posix, pattern.c_str(), cflags);
        if (rc != 0) {
            char buf[256];
            regerror(rc, &p.posix, buf, sizeof buf);
            return buf;
        }
        p.c_string = true;
        if (extended && pattern.find('\0') == std::string::npos)
            if (auto t = posix_to_pcre2(pattern, caseless, multiline))
                if (compile_pcre2(p, t->pattern, t->options).empty()) {
                    regfree(&p.posix);
                    return {};
                }
        p.is_posix = true;
        return {};
    }
    if (caseless) options |= PCRE2_CASELESS;
    return compile_pcre2(p, pattern, options);
}

} // namespace

RegexTable::RegexTable(RegexTable&&) noexcept = default;
RegexTable& RegexTable::operator=(RegexTable&&) noexcept = default;
RegexTable::~RegexTable() = default;

std::optional<RegexTable> RegexTable::open(const std::string& spec, const Warn& warn) {
    auto colon = spec.find(':');
    std::string type = colon == std::string::npos ? "" : spec.substr(0, colon);
    if (type != "pcre" && type != "regexp") {
        warn("table " + spec + ": unsupported type (pcre: and regexp: tables are supported)");
        return std::nullopt;
    }
    std::string path = spec.substr(colon + 1);
    std::ifstream in(path);
    if (!in) {
        warn("table " + spec + ": cannot open " + path);
        return std::nullopt;
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse(type, path, text.str(), warn);
}

RegexTable RegexTable::parse(const std::string& type, const std::string& name,
                             std::string_view text, const Warn& warn) {
    RegexTable table;
    table.label_ = type + ":" + name;
    bool posix = type == "regexp";
    for (const auto& numbered : logical_lines(text)) {
        // Not a structured binding: the lambda below captures the number.
        const int number = numbered.first;
        const std::string& line = numbered.second;
        auto bad = [&](const std::string& why) {
            warn(table.label_ + ", line " + std::to_string(number) + ": " + why +
                 ": skipping this rule");
        };
        size_t i = 0;
        bool negate = false;
        while (i < line.size() && line[i] == '!') {
            negate = !negate;
            ++i;
        }
        if (line.compare(i, 2, "if") == 0 || line.compare(i, 5, "endif") == 0) {
            bad("if/endif is not supported");
            continue;
        }
        if (i >= line.size()) {
            bad("no pattern");
            continue;
        }
        char delim = line[i++];
        std::string pattern;
        bool closed = false;
        for (; i < line.size(); ++i) {
            if (line[i] == '\\' && i + 1 < line.size()) {
                // An escaped delimiter is the delimiter itself.
                if (line[i + 1] != delim) pattern += '\\';
                pattern += line[++i];
            } else if (line[i] == delim) {
                closed = true;
                ++i;
                break;
            } else {
                pattern += line[i];
            }
        }
        if (!closed) {
            bad("missing closing delimiter '" + std::string(1, delim) + "'");
            continue;
        }
        size_t flags_end = line.find_first_of(" \t", i);
        std::string flags =
            line.substr(i, flags_end == std::string::npos ? std::string::npos : flags_end - i);
        size_t result_at = flags_end == std::string::npos
                               ? std::string::npos
                               : line.find_first_not_of(" \t", flags_end);
        if (result_at == std::string::npos) {
            bad("no result");
            continue;
        }
        std::string result = line.substr(result_at);
        while (!result.empty() && (result.back() == ' ' || result.back() == '\t'))
            result.pop_back();
        if (result.find('$') != std::string::npos) {
            bad("$number substitution is not supported");
            continue;
        }
        auto p = std::make_unique<Pattern>();
        if (std::string err = compile(*p, posix, pattern, flags); !err.empty()) {
            bad("pattern /" + pattern + "/: " + err);
            continue;
        }
        if (p->is_posix)
            warn(table.label_ + ", line " + std::to_string(number) + ": pattern /" + pattern +
                 "/ is matched by regexec(3), which has no limit on its work (only the subject "
                 "is cut at " +
                 std::to_string(max_subject) + " bytes)");
        table.rules_.push_back(Rule{std::move(p), negate, std::move(result), number});
    }
    return table;
}

std::optional<std::string> RegexTable::find(std::string_view key, MatchBudget& budget) const {
    if (auto hit = match(key, budget)) return *hit->result;
    return std::nullopt;
}

std::optional<RegexTable::Hit> RegexTable::match(std::string_view key, MatchBudget& budget) const {
    key = key.substr(0, max_subject);
    for (size_t i = 0; i < rules_.size(); ++i) {
        const Rule& r = rules_[i];
        if (budget.spent()) return std::nullopt;
        std::optional<bool> m = r.pattern->matches(key);
        if (!m) {
            // As Postfix treats its pcre: tables' backtracking limit: the
            // rule counts as no match, whether or not it is negated.
            --budget.hits_left;
            limit_hit(r);
            continue;
        }
        if (*m != r.negate) return Hit{i, r.line, &r.result};
    }
    return std::nullopt;
}

std::optional<std::string> RegexTable::find(std::string_view key) const {
    MatchBudget budget;
    return find(key, budget);
}

void RegexTable::limit_hit(const Rule& rule) const {
    ++limit_hits_;
    if (!limit_warn_) return;
    std::string where = label_ + ", line " + std::to_string(rule.line);
    if (auto text = limiter_.filter(where,
                                    where + ": matching stopped at its limit (a subject made to "
                                            "be slow?): the rule counts as no match",
                                    std::time(nullptr)))
        limit_warn_(*text);
}

size_t RegexTable::unbounded_rules() const {
    size_t n = 0;
    for (const Rule& r : rules_)
        n += r.pattern->is_posix;
    return n;
}

} // namespace cqmgr::qmgr
