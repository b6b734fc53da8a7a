#include "cqmgr/conf/main_cf.hpp"

#include "cqmgr/conf/logical_lines.hpp"
#include "cqmgr/conf/macro_expand.hpp"

#include <fstream>
#include <sstream>

namespace cqmgr::conf {

namespace {
// Splits "name = value" as Postfix's split_nameval(): the name runs to the
// first blank or '='; blanks around '=' and at both ends of the value are
// dropped.  Returns Postfix's error text, or nullopt on success.
std::optional<std::string> split_nameval(std::string_view line, std::string& name,
                                         std::string& value) {
    size_t i = 0;
    while (i < line.size() && is_postfix_space(line[i]))
        ++i;
    if (i == line.size() || line[i] == '=') return "missing attribute name";
    size_t name_start = i;
    while (i < line.size() && !is_postfix_space(line[i]) && line[i] != '=')
        ++i;
    size_t name_end = i;
    while (i < line.size() && is_postfix_space(line[i]))
        ++i;
    if (i == line.size() || line[i] != '=') return "missing '=' after attribute name";
    ++i;
    while (i < line.size() && is_postfix_space(line[i]))
        ++i;
    size_t end = line.size();
    while (end > i && is_postfix_space(line[end - 1]))
        --end;
    name.assign(line.substr(name_start, name_end - name_start));
    value.assign(line.substr(i, end - i));
    return std::nullopt;
}

// The first letter in a time default ("5d" -> 'd'), else `fallback`.
char default_unit(std::string_view def, char fallback) {
    for (char c : def)
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return c;
    return fallback;
}
} // namespace

MainCf::MainCf(Warn warn) : warn_(std::move(warn)) {}

void MainCf::warn(const std::string& text) const {
    if (warn_) warn_(text);
}

bool MainCf::load_dir(const std::string& dir) {
    dir_ = dir;
    values_["config_directory"] = Setting{dir, "command line"};
    std::string path = dir + "/main.cf";
    auto text = read_file(path);
    if (!text) {
        error_ = "open " + path + ": cannot read";
        return false;
    }
    return load_text(*text, path);
}

bool MainCf::load_text(std::string_view text, const std::string& origin) {
    for (auto& ll : read_logical_lines(text, origin, warn_)) {
        std::string name, value;
        std::string where = origin + ", line " + std::to_string(ll.line);
        if (auto err = split_nameval(ll.text, name, value)) {
            error_ = where + ": " + *err + ": \"" + ll.text + "\"";
            return false;
        }
        auto it = values_.find(name);
        if (it != values_.end() && it->second.value != value)
            warn(where + ": overriding earlier entry: " + name + "=" + it->second.value);
        values_[name] = Setting{std::move(value), where};
    }
    return true;
}

void MainCf::set(const std::string& name, std::string value) {
    values_[name] = Setting{std::move(value), "command line"};
}

void MainCf::set_default(const std::string& name, std::string value) {
    defaults_[name] = std::move(value);
}

void MainCf::set_default_fn(const std::string& name, DefaultFn fn) {
    default_fns_[name] = std::move(fn);
}

bool MainCf::is_set(const std::string& name) const {
    return values_.count(name) != 0;
}

bool MainCf::is_known(const std::string& name) const {
    return values_.count(name) || defaults_.count(name) || default_fns_.count(name);
}

std::optional<std::string> MainCf::lookup(const std::string& name) const {
    if (auto it = values_.find(name); it != values_.end()) return it->second.value;
    if (auto it = defaults_.find(name); it != defaults_.end()) return it->second;
    if (auto it = default_fns_.find(name); it != default_fns_.end()) {
        // A computed default that (indirectly) asks for itself is unset,
        // as the parameter is not yet defined when Postfix computes it.
        if (!computing_.insert(name).second) return std::nullopt;
        std::optional<std::string> v;
        try {
            v = it->second(*this);
        } catch (...) {
            computing_.erase(name);
            throw;
        }
        computing_.erase(name);
        return v;
    }
    return std::nullopt;
}

std::optional<std::string> MainCf::raw(const std::string& name) const {
    return lookup(name);
}

std::string MainCf::where(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::string() : it->second.where;
}

std::vector<std::string> MainCf::explicit_names() const {
    std::vector<std::string> out;
    for (auto& [name, setting] : values_)
        out.push_back(name);
    return out;
}

std::string MainCf::expand(std::string_view text) const {
    return expand_macros(text, [this](const std::string& n) { return lookup(n); });
}

std::string MainCf::str(const std::string& name) const {
    auto r = lookup(name);
    if (!r) return std::string();
    try {
        return expand(*r);
    } catch (const ConfigError& e) {
        // Daemons expand through their "mail_dict" dictionary, and say so
        // in the fatal message; postconf says just "macro processing error".
        std::string text = e.postfix_text() == "macro processing error"
                               ? "dictionary mail_dict: macro processing error"
                               : e.postfix_text();
        throw ConfigError(where(name), text,
                          "parameter " + name + ": " +
                              (e.detail().empty() ? e.postfix_text() : e.detail()),
                          e.warning());
    }
}

void MainCf::fatal(const std::string& name, std::string text) const {
    throw ConfigError(where(name), std::move(text));
}

std::string MainCf::str(const std::string& name, std::string_view def, int min_len,
                        int max_len) const {
    std::string v = is_known(name) ? str(name) : expand(def);
    auto len = static_cast<int64_t>(v.size());
    if (min_len && len < min_len)
        fatal(name, "bad string length " + std::to_string(len) + " < " + std::to_string(min_len) +
                        ": " + name + " = " + v);
    if (max_len && len > max_len)
        fatal(name, "bad string length " + std::to_string(len) + " > " + std::to_string(max_len) +
                        ": " + name + " = " + v);
    return v;
}

int64_t MainCf::integer(const std::string& name, int64_t def, int64_t min, int64_t max) const {
    if (!is_known(name)) return def;
    std::string v = str(name);
    return checked_number(name, v, parse_int(v), min, max);
}

int64_t MainCf::long_integer(const std::string& name, int64_t def, int64_t min, int64_t max) const {
    if (!is_known(name)) return def;
    std::string v = str(name);
    return checked_number(name, v, parse_long(v), min, max);
}

int64_t MainCf::percent(const std::string& name, int64_t def) const {
    if (!is_known(name)) return def;
    std::string v = str(name);
    std::string digits = v.ends_with('%') ? v.substr(0, v.size() - 1) : v;
    std::optional<int64_t> n = parse_int(digits);
    if (n && *n < 0)
        fatal(name, "invalid " + name + " parameter value " + std::to_string(*n) + " < 0");
    return checked_number(name, v, n, 0, 100);
}

int64_t MainCf::checked_number(const std::string& name, const std::string& v,
                               std::optional<int64_t> n, int64_t min, int64_t max) const {
    // Postfix stops on a malformed or out-of-range number; 0 means no bound.
    if (!n) fatal(name, "bad numerical configuration: " + name + " = " + v);
    if (min && *n < min)
        fatal(name, "invalid " + name + " parameter value " + std::to_string(*n) + " < " +
                        std::to_string(min));
    if (max && *n > max)
        fatal(name, "invalid " + name + " parameter value " + std::to_string(*n) + " > " +
                        std::to_string(max));
    return *n;
}

int64_t MainCf::time(const std::string& name, std::string_view def, char unit, int64_t min,
                     int64_t max) const {
    char u = default_unit(def, unit);
    std::string v = is_known(name) ? str(name) : std::string(def);
    auto t = parse_time(v, u);
    if (!t) fatal(name, "parameter " + name + ": bad time value or unit: " + v);
    if (min && *t < min)
        fatal(name,
              "invalid " + name + ": " + std::to_string(*t) + " (min " + std::to_string(min) + ")");
    if (max && *t > max)
        fatal(name,
              "invalid " + name + ": " + std::to_string(*t) + " (max " + std::to_string(max) + ")");
    return *t;
}

bool MainCf::boolean(const std::string& name, bool def) const {
    if (!is_known(name)) return def;
    std::string v = str(name);
    auto b = parse_bool(v);
    if (!b) fatal(name, "bad boolean configuration: " + name + " = " + v);
    return *b;
}

std::vector<std::string> MainCf::list(const std::string& name) const {
    return split_list(str(name));
}

} // namespace cqmgr::conf
