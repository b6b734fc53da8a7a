#include "cqmgr/conf/macro_expand.hpp"

#include "cqmgr/conf/compat_level.hpp"
#include "cqmgr/conf/config_error.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace cqmgr::conf {

namespace {

constexpr std::string_view kBlanks = " \t\r\n";        // Postfix CHARS_SPACE
constexpr std::string_view kOpChars = "<>!=?+-*/~&|%"; // scanned as an operator
constexpr int kMaxLevel = 100;                         // Postfix's nesting limit per expansion
constexpr int kMaxFrames = 300;                        // our own guard (see Expander::frames_)

// ASCII letters and digits (parameter names also allow '_').
bool is_alnum(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// True for a non-empty string of decimal digits (compared as numbers).
bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// Throws the error every expansion problem turns into.
[[noreturn]] void fail(const std::string& why) {
    throw ConfigError({}, "macro processing error", why, why);
}

// Shows at most 20 characters of the text after a syntax error.
std::string next20(std::string_view s) {
    return std::string(s.substr(0, 20));
}

enum class Op { Eq, Ne, Lt, Le, Ge, Gt };

// Maps an operator token to its code.
std::optional<Op> op_from(std::string_view s) {
    if (s == "==") return Op::Eq;
    if (s == "!=") return Op::Ne;
    if (s == "<") return Op::Lt;
    if (s == "<=") return Op::Le;
    if (s == ">=") return Op::Ge;
    if (s == ">") return Op::Gt;
    return std::nullopt;
}

// Applies an operator to the sign of a comparison.
bool apply(Op op, long delta) {
    switch (op) {
    case Op::Eq:
        return delta == 0;
    case Op::Ne:
        return delta != 0;
    case Op::Lt:
        return delta < 0;
    case Op::Le:
        return delta <= 0;
    case Op::Ge:
        return delta >= 0;
    case Op::Gt:
        return delta > 0;
    }
    return false;
}

// A decimal number known to be all digits; overflow is fatal in Postfix.
long to_long(const std::string& s) {
    errno = 0;
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (*end != 0 || errno == ERANGE) throw ConfigError({}, "mac_exp_eval: bad conversion: " + s);
    return v;
}

// One expansion: the output buffer and the nesting level of one call of
// Postfix's mac_expand().  Operands of relational expressions are expanded
// by a fresh Expander (Postfix starts a new level count there too).
class Expander {
  public:
    Expander(const MacroLookup& lookup, int& frames) : lookup_(lookup), frames_(frames) {}

    // Splits `text` into literal text and $references and handles each.
    void parse(std::string_view text);

    std::string out;

  private:
    // Appends literal text.
    void on_literal(std::string_view text);
    // Handles the inside of one $name / ${...} / $(...) reference.
    void on_expr(std::string_view text);
    // Evaluates "{a} op {b}" at the start of `cp` to "true" or "".
    std::optional<std::string> relational(std::string_view& cp);
    // Counts one nesting level (and fails when too deep) / undoes it.
    void enter(std::string_view what);
    void leave() {
        --level_;
        --frames_;
    }

    const MacroLookup& lookup_;
    int& frames_; // nesting across all Expanders of one top-level call: a
                  // reference cycle through relational operands would
                  // otherwise recurse until the stack runs out (it does in
                  // Postfix); we stop with a nesting error instead
    int level_ = 0;
};

// Counts one more nested call; too deep is an error.
void Expander::enter(std::string_view what) {
    if (level_++ > kMaxLevel || ++frames_ > kMaxFrames)
        fail("unreasonable macro call nesting: \"" + std::string(what) + "\"");
}

void Expander::parse(std::string_view text) {
    std::string literal;
    size_t i = 0;
    while (i < text.size()) {
        char c = text[i];
        if (c != '$') {
            literal += c;
            ++i;
            continue;
        }
        if (i + 1 < text.size() && text[i + 1] == '$') { // $$ is a literal $
            literal += '$';
            i += 2;
            continue;
        }
        if (!literal.empty()) {
            on_literal(literal);
            literal.clear();
        }
        ++i;
        std::string name;
        if (i < text.size() && (text[i] == '{' || text[i] == '(')) {
            // ${...} or $(...): only the same kind of bracket nests.
            char open = text[i], close = open == '{' ? '}' : ')';
            int level = 1;
            size_t j = i + 1;
            for (; level > 0; ++j) {
                if (j >= text.size())
                    fail("truncated macro reference: \"" + std::string(text) + "\"");
                if (text[j] == open) ++level;
                if (text[j] == close) --level;
            }
            name.assign(text.substr(i + 1, j - i - 2));
            i = j;
        } else {
            size_t j = i;
            while (j < text.size() && (is_alnum(text[j]) || text[j] == '_'))
                ++j;
            name.assign(text.substr(i, j - i));
            i = j;
        }
        if (name.empty()) fail("empty macro name: \"" + std::string(text) + "\"");
        on_expr(name);
    }
    if (!literal.empty()) on_literal(literal);
}

void Expander::on_literal(std::string_view text) {
    enter(text);
    out.append(text);
    leave();
}

namespace {
// Skips white space; true (and `cp` moved to it) when a '{' follows.
bool find_left_curly(std::string_view& cp) {
    size_t n = cp.find_first_not_of(kBlanks);
    if (n == std::string_view::npos || cp[n] != '{') return false;
    cp.remove_prefix(n);
    return true;
}

// `cp` starts with '{': returns the text inside the balanced braces and
// moves `cp` past the '}' and any white space after it.
std::string extract_curly(std::string_view& cp) {
    int level = 1;
    size_t i = 1;
    for (;; ++i) {
        if (i >= cp.size())
            fail("unbalanced {} in attribute expression: \"" + std::string(cp) + "\"");
        if (cp[i] == '{')
            ++level;
        else if (cp[i] == '}' && --level <= 0)
            break;
    }
    std::string payload(cp.substr(1, i - 1));
    cp.remove_prefix(i + 1);
    size_t n = cp.find_first_not_of(kBlanks);
    cp.remove_prefix(n == std::string_view::npos ? cp.size() : n);
    return payload;
}
} // namespace

// Parses "{left} op {right}" at `cp` (which starts with '{'), evaluates it
// and returns "true" or "" as the value the ?: operators then test.
std::optional<std::string> Expander::relational(std::string_view& cp) {
    std::string left = extract_curly(cp);
    size_t op_len = 0;
    while (op_len < cp.size() && kOpChars.find(cp[op_len]) != std::string_view::npos)
        ++op_len;
    auto op = op_from(cp.substr(0, op_len));
    if (!op)
        fail("\"==\" or \"!=\" or \"<\" or \"<=\" or \">=\" or \">\" expected at: \"...{" + left +
             "}>>>" + next20(cp) + "\"");
    std::string_view op_text = cp.substr(0, op_len);
    cp.remove_prefix(op_len);
    bool level_compare = false;
    if (!cp.empty() && is_alnum(cp.front())) {
        size_t n = 0;
        while (n < cp.size() && is_alnum(cp[n]))
            ++n;
        if (cp.substr(0, n) != "level")
            fail("bad operator suffix at: \"..." + std::string(op_text) + ">>>" +
                 std::string(cp.substr(0, n)) + "\"");
        level_compare = true;
        cp.remove_prefix(n);
    }
    if (!find_left_curly(cp))
        fail("\"{expression}\" expected at: \"...{" + left + "} " + std::string(op_text) + ">>>" +
             next20(cp) + "\"");
    std::string right = extract_curly(cp);

    Expander l(lookup_, frames_), r(lookup_, frames_);
    l.parse(left);
    r.parse(right);
    bool truth;
    if (level_compare) {
        auto a = parse_compat_level(l.out), b = parse_compat_level(r.out);
        if (!a) fail("malformed compatibility level syntax: \"" + l.out + "\"");
        if (!b) fail("malformed compatibility level syntax: \"" + r.out + "\"");
        truth = apply(*op, *a < *b ? -1 : *a > *b ? 1 : 0);
    } else if (all_digits(l.out) && all_digits(r.out)) {
        long a = to_long(l.out), b = to_long(r.out);
        truth = apply(*op, a < b ? -1 : a > b ? 1 : 0);
    } else {
        int c = std::strcmp(l.out.c_str(), r.out.c_str());
        truth = apply(*op, c);
    }
    return std::string(truth ? "true" : "");
}

void Expander::on_expr(std::string_view expr) {
    enter(expr);
    std::string_view cp = expr;
    std::optional<std::string> value;
    char ch = 0;
    if (find_left_curly(cp)) {
        value = relational(cp);
        if (!cp.empty()) {
            ch = cp.front();
            if (ch != '?' && ch != ':')
                fail("\"?\" or \":\" expected at: \"...}>>>" + next20(cp) + "\"");
            cp.remove_prefix(1);
        }
    } else {
        // A parameter name, optionally surrounded by white space, then
        // optionally ? or : and the result text.
        size_t n = cp.find_first_not_of(kBlanks);
        cp.remove_prefix(n == std::string_view::npos ? cp.size() : n);
        size_t i = 0;
        for (;; ++i) {
            size_t ws = cp.substr(i).find_first_not_of(kBlanks);
            size_t at = ws == std::string_view::npos ? cp.size() : i + ws;
            if (at >= cp.size()) {
                ch = 0;
                break;
            }
            if (cp[at] == '?' || cp[at] == ':') {
                ch = cp[at];
                break;
            }
            if (!is_alnum(cp[i]) && cp[i] != '_')
                fail("attribute name syntax error at: \"..." +
                     std::string(expr.substr(0, expr.size() - cp.size() + i)) + ">>>" +
                     next20(cp.substr(i)) + "\"");
        }
        std::string name(cp.substr(0, i));
        if (ch) {
            size_t ws = cp.substr(i).find_first_not_of(kBlanks);
            cp.remove_prefix(i + ws + 1);
        } else {
            cp = {};
        }
        value = name.empty() ? std::nullopt : lookup_(name);
    }
    bool nonempty = value && !value->empty();
    switch (ch) {
    case '?': {
        std::string if_true;
        if (find_left_curly(cp)) {
            if_true = extract_curly(cp);
        } else {
            if_true.assign(cp);
            cp = {};
        }
        if (nonempty) parse(if_true);
        if (cp.empty()) break;
        if (cp.front() != ':')
            fail("\":\" expected at: \"..." + if_true + "}>>>" + next20(cp) + "\"");
        cp.remove_prefix(1);
        [[fallthrough]];
    }
    case ':': {
        std::string if_false;
        if (find_left_curly(cp)) {
            if_false = extract_curly(cp);
        } else {
            if_false.assign(cp);
            cp = {};
        }
        if (!nonempty) parse(if_false);
        if (!cp.empty()) fail("unexpected input at: \"..." + if_false + "}>>>" + next20(cp) + "\"");
        break;
    }
    default:
        if (nonempty) parse(*value); // the value is expanded in turn
        break;
    }
    leave();
}

} // namespace

std::string expand_macros(std::string_view text, const MacroLookup& lookup) {
    int frames = 0;
    Expander e(lookup, frames);
    e.parse(text);
    return std::move(e.out);
}

} // namespace cqmgr::conf
