// POSIX extended regular expressions (with the GNU C library's operators)
// rewritten as PCRE2 patterns; see posix_regex.hpp for what is translated.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "posix_regex.hpp"

#include <array>
#include <pcre2.h>
#include <vector>

namespace cqmgr::qmgr {

namespace {

bool is_alnum(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// `c` as a PCRE2 literal, in or out of a class: letters and digits as they
// are, other printable ASCII escaped, anything else in hex (no byte then
// depends on PCRE2's options or on where it stands).
std::string literal(unsigned char c) {
    if (is_alnum(c)) return std::string(1, static_cast<char>(c));
    if (c > 0x20 && c < 0x7f) return std::string{'\\', static_cast<char>(c)};
    static const char hex[] = "0123456789abcdef";
    return std::string("\\x{") + hex[c >> 4] + hex[c & 15] + "}";
}

// Whether `a`-`b` is a range regcomp and PCRE2 read alike: ends of one
// kind (digits, lower-case or upper-case letters), in order.
bool plain_range(unsigned char a, unsigned char b) {
    auto kind = [](unsigned char c) {
        if (c >= '0' && c <= '9') return 1;
        if (c >= 'a' && c <= 'z') return 2;
        if (c >= 'A' && c <= 'Z') return 3;
        return 0;
    };
    return kind(a) != 0 && kind(a) == kind(b) && a <= b;
}

// The bracket expression at `p[i]` (just after its '['): appends its PCRE2
// class to `out` and moves `i` past its ']'; false if it is not translated.
bool bracket(std::string_view p, size_t& i, bool caseless, bool newline, std::string& out) {
    static constexpr std::array<std::string_view, 12> classes{"alnum", "alpha", "blank", "cntrl",
                                                              "digit", "graph", "lower", "print",
                                                              "punct", "space", "upper", "xdigit"};
    out += '[';
    if (i < p.size() && p[i] == '^') {
        // With REG_NEWLINE a non-matching list does not match a newline.
        out += newline ? "^\\n" : "^";
        ++i;
    }
    size_t first = i;
    while (true) {
        if (i >= p.size()) return false; // no closing ']'
        unsigned char c = static_cast<unsigned char>(p[i]);
        if (c == ']' && i > first) {
            ++i;
            break;
        }
        if (c == '[' && i + 1 < p.size() && (p[i + 1] == '.' || p[i + 1] == '=')) return false;
        if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
            size_t end = p.find(":]", i + 2);
            if (end == std::string_view::npos) return false;
            std::string_view name = p.substr(i + 2, end - i - 2);
            bool known = false;
            for (auto k : classes)
                known |= k == name;
            if (!known) return false;
            // regcomp with REG_ICASE takes either case's class as alpha.
            if (caseless && (name == "upper" || name == "lower")) name = "alpha";
            out += "[:" + std::string(name) + ":]";
            i = end + 2;
            if (i < p.size() && p[i] == '-' && i + 1 < p.size() && p[i + 1] != ']')
                return false; // a class as a range's end
            continue;
        }
        if (c == '-' && i > first && !(i + 1 < p.size() && p[i + 1] == ']'))
            return false; // a '-' that is neither first nor last nor a range
        if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
            unsigned char e = static_cast<unsigned char>(p[i + 2]);
            if (!plain_range(c, e)) return false;
            out += literal(c) + "-" + literal(e);
            i += 3;
            continue;
        }
        out += literal(c); // '\\' too: a bracket expression has no escapes
        ++i;
    }
    out += ']';
    return true;
}

// An interval `{m}`, `{m,}`, `{m,n}` or `{,n}` at `p[i]` (just after its
// '{'): its PCRE2 form, moving `i` past the '}'; nothing if it is not one
// regcomp takes.
std::optional<std::string> interval(std::string_view p, size_t& i) {
    constexpr long dup_max = 32767; // regcomp's RE_DUP_MAX
    auto number = [&](long& n) {
        size_t start = i;
        n = 0;
        while (i < p.size() && p[i] >= '0' && p[i] <= '9' && n <= dup_max)
            n = n * 10 + (p[i++] - '0');
        return i > start;
    };
    long m = 0, n = 0;
    bool has_m = number(m);
    bool comma = i < p.size() && p[i] == ',';
    if (comma) ++i;
    bool has_n = comma && number(n);
    if (i >= p.size() || p[i] != '}' || (!has_m && !comma)) return std::nullopt;
    ++i;
    if (m > dup_max || n > dup_max || (has_n && n < m)) return std::nullopt;
    if (!comma) return "{" + std::to_string(m) + "}";
    return "{" + std::to_string(m) + "," + (has_n ? std::to_string(n) : "") + "}";
}

} // namespace

std::optional<PosixTranslation> posix_to_pcre2(std::string_view p, bool caseless, bool newline) {
    // What precedes a quantifier: an atom (from `atom` in `out`), an atom
    // already quantified, or nothing that can be (the start of the pattern,
    // of a group or of an alternative, or an assertion).
    enum class Before { nothing, atom, quantified };
    // Per open group (and the whole pattern): where it starts in `out`, the
    // groups complete before its alternation, and those of its alternatives
    // so far (regcomp accepts `\N` only after group N is complete in the
    // same alternative); whether its current alternative, or any, matched
    // a character so far, and whether it holds an anchor.
    struct Level {
        size_t start;
        int group;
        uint32_t initial;
        uint32_t accumulated = 0;
        bool consumed = false;
        bool ever_consumed = false;
        bool anchored = false;
    };
    // regexec lets an anchor see a newline that the same match consumed
    // ("a$." matches "a\nx", ".^x" matches "a\nx", without REG_NEWLINE):
    // only a '^' that nothing matched before can precede, and a '$' that
    // nothing can follow (but another alternative), are rewritten.
    // `dollar_level`: the level that holds the last '$' (0: none);
    // `shelter`: the level of an alternative begun after it, where
    // characters may match (0: none).
    size_t dollar_level = 0, shelter = 0;
    bool group_anchored = false; // the group just closed holds an anchor
    std::string out;
    std::vector<Level> levels{{0, 0, 0}};
    uint32_t completed = 0; // bit N: group N is complete
    int groups = 0;
    Before before = Before::nothing;
    bool atom_is_group = false;
    size_t atom = 0;
    // An atom that matches characters; false if it may not stand here.
    auto consume = [&] {
        if (dollar_level > 0 && shelter == 0) return false;
        levels.back().consumed = levels.back().ever_consumed = true;
        return true;
    };
    auto quantify = [&](const std::string& q) {
        if (before == Before::nothing) return false;
        if (atom_is_group && group_anchored) return false; // "(^a|b)*"
        // regcomp stacks quantifiers ("a+?" is "(a+)?"); PCRE2 reads a
        // second one as lazy or possessive, so the first is grouped.
        if (before == Before::quantified) out.insert(atom, "(?:").append(")");
        out += q;
        before = Before::quantified;
        return true;
    };
    for (size_t i = 0; i < p.size();) {
        unsigned char c = static_cast<unsigned char>(p[i]);
        if (c == 0) return std::nullopt;
        size_t here = out.size();
        switch (c) {
        case '\\': {
            if (i + 1 >= p.size()) return std::nullopt;
            unsigned char n = static_cast<unsigned char>(p[i + 1]);
            i += 2;
            if (n >= '1' && n <= '9') {
                if (!(completed & (1u << (n - '0'))) || !consume()) return std::nullopt;
                out += std::string("\\g{") + static_cast<char>(n) + "}";
                before = Before::atom;
            } else if (n == 'w' || n == 'W' || n == 's' || n == 'S') {
                if (!consume()) return std::nullopt;
                out += std::string{'\\', static_cast<char>(n)};
                before = Before::atom;
            } else if (n == 'b' || n == 'B' || n == '<' || n == '>' || n == '`' || n == '\'') {
                out += n == 'b'   ? "\\b"
                       : n == 'B' ? "\\B"
                       : n == '<' ? "\\b(?=\\w)"
                       : n == '>' ? "\\b(?<=\\w)"
                       : n == '`' ? "\\A"
                                  : "\\z";
                before = Before::nothing;
            } else if (caseless && n >= 'a' && n <= 'z') {
                // regexec with REG_ICASE never matches an escaped lower-case
                // letter (GNU C library 2.36): regexec keeps that pattern.
                return std::nullopt;
            } else {
                if (!consume()) return std::nullopt;
                out += literal(n);
                before = Before::atom;
            }
            break;
        }
        case '.':
            if (!consume()) return std::nullopt;
            out += '.';
            before = Before::atom;
            ++i;
            break;
        case '[':
            ++i;
            if (!consume() || !bracket(p, i, caseless, newline, out)) return std::nullopt;
            before = Before::atom;
            break;
        case '(':
            out += '(';
            levels.push_back({here, ++groups, completed});
            before = Before::nothing;
            ++i;
            break;
        case ')':
            ++i;
            if (levels.size() == 1) { // an unmatched ')' is a literal
                if (!consume()) return std::nullopt;
                out += "\\)";
                before = Before::atom;
                break;
            }
            out += ')';
            completed |= levels.back().accumulated;
            if (levels.back().group < 32) completed |= 1u << levels.back().group;
            here = levels.back().start;
            group_anchored = levels.back().anchored;
            if (shelter == levels.size()) shelter = 0;
            if (dollar_level == levels.size()) --dollar_level;
            if (levels.back().ever_consumed) {
                Level& parent = levels[levels.size() - 2];
                parent.consumed = parent.ever_consumed = true;
            }
            levels.pop_back();
            before = Before::atom;
            atom = here;
            atom_is_group = true;
            continue;
        case '|':
            out += '|';
            levels.back().accumulated |= completed;
            completed = levels.back().initial;
            levels.back().consumed = false;
            if (dollar_level >= levels.size() && (shelter == 0 || levels.size() < shelter))
                shelter = levels.size();
            before = Before::nothing;
            ++i;
            break;
        case '^':
        case '$':
            if (c == '^') {
                for (const Level& l : levels)
                    if (l.consumed) return std::nullopt;
            } else {
                dollar_level = levels.size();
                shelter = 0;
            }
            for (Level& l : levels)
                l.anchored = true;
            out += static_cast<char>(c);
            before = Before::nothing;
            ++i;
            break;
        case '*':
        case '+':
        case '?':
            ++i;
            if (!quantify(std::string(1, static_cast<char>(c)))) return std::nullopt;
            continue; // the atom stays where it was
        case '{': {
            ++i;
            auto q = interval(p, i);
            if (!q || !quantify(*q)) return std::nullopt;
            continue;
        }
        default:
            if (!consume()) return std::nullopt;
            out += literal(c);
            before = Before::atom;
            ++i;
            break;
        }
        atom = here;
        atom_is_group = false;
    }
    if (levels.size() != 1) return std::nullopt; // an unclosed '('
    // Without REG_NEWLINE, '.' matches a newline and '^' and '$' only the
    // subject's ends; with it, '.' does not, and '^' and '$' also match
    // after and before each newline (after a final one too).
    uint32_t options =
        (newline ? PCRE2_MULTILINE | PCRE2_ALT_CIRCUMFLEX : PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY) |
        (caseless ? PCRE2_CASELESS : 0);
    return PosixTranslation{std::move(out), options};
}

} // namespace cqmgr::qmgr
