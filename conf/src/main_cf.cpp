#include "cqmgr/conf/main_cf.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

namespace cqmgr::conf {

namespace {
std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Given text starting with '{', returns the index of its matching '}'.
size_t matching_brace(std::string_view s) {
    int level = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '{') ++level;
        else if (s[i] == '}' && --level == 0) return i;
    }
    return std::string_view::npos;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}
} // namespace

MainCf::MainCf(Warn warn) : warn_(std::move(warn)) {}

void MainCf::warn(const std::string& text) const {
    if (warn_) warn_(text);
}

bool MainCf::load_dir(const std::string& dir) {
    dir_ = dir;
    std::string path = dir + "/main.cf";
    std::ifstream in(path);
    if (!in) {
        error_ = "open " + path + ": cannot read";
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    load_text(ss.str(), path);
    return true;
}

void MainCf::load_text(std::string_view text, const std::string& origin) {
    // Join logical lines: a line starting with white space continues the
    // previous one; comments and blank lines end nothing and are dropped.
    std::string logical;
    int logical_line = 0, lineno = 0;
    auto flush = [&] {
        std::string_view l = trim(logical);
        if (!l.empty()) {
            auto eq = l.find('=');
            std::string_view name = eq == std::string_view::npos ? l : trim(l.substr(0, eq));
            bool ok = eq != std::string_view::npos && !name.empty();
            for (char c : name) ok = ok && is_name_char(c);
            if (!ok) {
                warn(origin + ", line " + std::to_string(logical_line) +
                     ": missing '=' after attribute name: \"" + std::string(name) + "\"");
            } else {
                std::string n(name);
                values_[n] = std::string(trim(l.substr(eq + 1)));
                origin_[n] = origin + ", line " + std::to_string(logical_line);
            }
        }
        logical.clear();
    };
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
        ++lineno;
        std::string_view t = trim(line);
        if (t.empty() || t.front() == '#') {
            // Blank lines and comments: skipped, and they do not end a
            // logical line (Postfix's readlline behaves the same).
        } else if (std::isspace(static_cast<unsigned char>(line.front())) && !logical.empty()) {
            logical += ' ';
            logical += t;
        } else {
            flush();
            logical = std::string(t);
            logical_line = lineno;
        }
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
    }
    flush();
}

void MainCf::set(const std::string& name, std::string value) {
    values_[name] = std::move(value);
    origin_[name] = "command line";
}

void MainCf::set_default(const std::string& name, std::string value) {
    defaults_[name] = std::move(value);
}

bool MainCf::is_set(const std::string& name) const { return values_.count(name) != 0; }

std::optional<std::string> MainCf::raw(const std::string& name) const {
    if (auto it = values_.find(name); it != values_.end()) return it->second;
    if (auto it = defaults_.find(name); it != defaults_.end()) return it->second;
    return std::nullopt;
}

std::string MainCf::str(const std::string& name) const {
    auto r = raw(name);
    return r ? expand_depth(*r, 0) : std::string();
}

std::string MainCf::expand(std::string_view text) const { return expand_depth(text, 0); }

std::string MainCf::expand_depth(std::string_view text, int depth) const {
    if (depth > 100) {
        warn("unreasonable macro call nesting: \"" + std::string(text.substr(0, 100)) + "\"");
        return std::string();
    }
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        char c = text[i];
        if (c != '$' || i + 1 >= text.size()) {
            out += c;
            ++i;
            continue;
        }
        char open = text[i + 1];
        if (open == '{' || open == '(') {
            char close = open == '{' ? '}' : ')';
            // Find the matching close, honouring nesting.
            size_t j = i + 2;
            int level = 1;
            for (; j < text.size(); ++j) {
                if (text[j] == open) ++level;
                else if (text[j] == close && --level == 0) break;
            }
            if (j >= text.size()) {
                warn("unmatched '" + std::string(1, open) + "' in \"" + std::string(text) + "\"");
                out.append(text.substr(i));
                break;
            }
            std::string_view inner = text.substr(i + 2, j - i - 2);
            size_t k = 0;
            while (k < inner.size() && is_name_char(inner[k])) ++k;
            std::string name(inner.substr(0, k));
            std::string_view rest = inner.substr(k);
            std::string value = str_depth_lookup(name, depth);
            if (rest.empty()) {
                out += value;
            } else if (rest.front() == '?' || rest.front() == ':') {
                // ${name?value}, ${name:value}, the braced forms, and the
                // if-then-else form ${name?{then}:{else}}.
                bool when_set = rest.front() == '?';
                std::string_view body = trim(rest.substr(1));
                std::string_view first = body, second;
                bool has_else = false;
                if (!body.empty() && body.front() == '{') {
                    size_t close_at = matching_brace(body);
                    if (close_at != std::string_view::npos) {
                        first = body.substr(1, close_at - 1);
                        std::string_view tail = trim(body.substr(close_at + 1));
                        if (when_set && !tail.empty() && tail.front() == ':') {
                            tail = trim(tail.substr(1));
                            if (tail.size() >= 2 && tail.front() == '{' && tail.back() == '}')
                                tail = tail.substr(1, tail.size() - 2);
                            second = tail;
                            has_else = true;
                        }
                    }
                }
                if (when_set == !value.empty()) out += expand_depth(trim(first), depth + 1);
                else if (has_else) out += expand_depth(trim(second), depth + 1);
            } else {
                warn("unsupported macro syntax: \"" + std::string(inner) + "\"");
            }
            i = j + 1;
        } else if (is_name_char(open)) {
            size_t j = i + 1;
            while (j < text.size() && is_name_char(text[j])) ++j;
            out += str_depth_lookup(std::string(text.substr(i + 1, j - i - 1)), depth);
            i = j;
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

std::string MainCf::str_depth_lookup(const std::string& name, int depth) const {
    auto r = raw(name);
    return r ? expand_depth(*r, depth + 1) : std::string();
}

std::optional<int64_t> parse_time(std::string_view value, char default_unit) {
    value = trim(value);
    if (value.empty()) return std::nullopt;
    int64_t n = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || n < 0) return std::nullopt;
    std::string_view suffix(p, value.data() + value.size() - p);
    char unit = default_unit;
    if (suffix.size() == 1) unit = static_cast<char>(std::tolower(static_cast<unsigned char>(suffix[0])));
    else if (!suffix.empty()) return std::nullopt;
    int64_t mult;
    switch (unit) {
    case 's': mult = 1; break;
    case 'm': mult = 60; break;
    case 'h': mult = 3600; break;
    case 'd': mult = 86400; break;
    case 'w': mult = 604800; break;
    default: return std::nullopt;
    }
    if (n > INT32_MAX / mult) return std::nullopt;
    return n * mult;
}

int64_t MainCf::integer(const std::string& name, int64_t def, int64_t min, int64_t max) const {
    std::string v(trim(str(name)));
    if (v.empty() && !raw(name)) return def;
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size()) {
        warn("bad numerical configuration: " + name + " = " + v + "; using " + std::to_string(def));
        return def;
    }
    if (n < min || (max > 0 && n > max)) {
        warn("invalid " + name + " parameter value " + v + "; using " + std::to_string(def));
        return def;
    }
    return n;
}

int64_t MainCf::time(const std::string& name, std::string_view def, char unit, int64_t min,
                     int64_t max) const {
    auto fallback = parse_time(def, unit).value_or(0);
    std::string v(trim(str(name)));
    if (!raw(name)) return fallback;
    auto t = parse_time(v, unit);
    if (!t) {
        warn("invalid " + name + " parameter value " + v + "; using " + std::string(def));
        return fallback;
    }
    if (*t < min || (max > 0 && *t > max)) {
        warn("invalid " + name + " parameter value " + v + " (out of range); using " +
             std::string(def));
        return fallback;
    }
    return *t;
}

bool MainCf::boolean(const std::string& name, bool def) const {
    if (!raw(name)) return def;
    std::string v = lower(trim(str(name)));
    if (v == "yes" || v == "true") return true;
    if (v == "no" || v == "false") return false;
    warn("bad boolean configuration: " + name + " = " + v + "; using " + (def ? "yes" : "no"));
    return def;
}

std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> out;
    size_t i = 0;
    auto sep = [](char c) { return c == ',' || std::isspace(static_cast<unsigned char>(c)); };
    while (i < text.size()) {
        while (i < text.size() && sep(text[i])) ++i;
        size_t j = i;
        while (j < text.size() && !sep(text[j])) ++j;
        if (j > i) out.emplace_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

std::vector<std::string> MainCf::list(const std::string& name) const { return split_list(str(name)); }

} // namespace cqmgr::conf
