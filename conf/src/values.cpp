#include "cqmgr/conf/values.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace cqmgr::conf {

namespace {
// strtol() on the whole text: the value, and where the digits ended.
struct Strtol {
    long value = 0;
    size_t end = 0;    // offset of the first character not used
    bool range = true; // false on overflow
};

// Runs strtol() on a NUL-terminated copy (the text may contain a NUL, as a
// C string it ends there, like in Postfix).
Strtol c_strtol(const std::string& s) {
    Strtol r;
    errno = 0;
    char* end = nullptr;
    r.value = std::strtol(s.c_str(), &end, 10);
    r.end = static_cast<size_t>(end - s.c_str());
    r.range = errno != ERANGE;
    return r;
}

// The text up to the first NUL, as Postfix's C strings see it.
std::string c_string(std::string_view v) {
    return std::string(v.substr(0, v.find('\0')));
}
} // namespace

std::optional<int64_t> parse_int(std::string_view value) {
    std::string s = c_string(value);
    if (s.empty()) return std::nullopt;
    auto r = c_strtol(s);
    if (r.end != s.size() || !r.range || r.value < INT_MIN || r.value > INT_MAX)
        return std::nullopt;
    return r.value;
}

std::optional<int64_t> parse_long(std::string_view value) {
    std::string s = c_string(value);
    if (s.empty()) return std::nullopt;
    auto r = c_strtol(s);
    if (r.end != s.size() || !r.range) return std::nullopt;
    return r.value;
}

std::optional<int64_t> parse_time(std::string_view value, char default_unit) {
    std::string s = c_string(value);
    if (s.empty()) return std::nullopt;
    auto r = c_strtol(s);
    if (!r.range || r.value < 0 || r.value > INT_MAX) return std::nullopt;
    long n = r.value;
    char unit = r.end < s.size() ? s[r.end] : default_unit;
    long mult;
    switch (unit) {
    case 'w':
        mult = 7L * 24 * 3600;
        break;
    case 'd':
        mult = 24L * 3600;
        break;
    case 'h':
        mult = 3600;
        break;
    case 'm':
        mult = 60;
        break;
    case 's':
        return n;
    default:
        return std::nullopt;
    }
    if (n >= INT_MAX / mult) return std::nullopt; // Postfix requires n < INT_MAX / unit
    return n * mult;
}

std::optional<bool> parse_bool(std::string_view value) {
    std::string s = c_string(value);
    auto same = [&](std::string_view word) {
        if (s.size() != word.size()) return false;
        for (size_t i = 0; i < s.size(); ++i) {
            char c = s[i];
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
            if (c != word[i]) return false;
        }
        return true;
    };
    if (same("yes")) return true;
    if (same("no")) return false;
    return std::nullopt;
}

std::vector<std::string> split_list(std::string_view text) {
    constexpr std::string_view seps = ", \t\r\n";
    std::vector<std::string> out;
    size_t i = 0;
    while (i < text.size()) {
        i = text.find_first_not_of(seps, i);
        if (i == std::string_view::npos) break;
        size_t j = text.find_first_of(seps, i);
        if (j == std::string_view::npos) j = text.size();
        out.emplace_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

std::optional<std::string> hostname_problem(std::string_view name) {
    constexpr size_t kLabelMax = 63, kNameMax = 255;
    std::string shown(name.substr(0, 100));
    if (name.empty()) return "valid_hostname: empty hostname";
    size_t label = 0;
    bool non_numeric = false;
    for (size_t i = 0; i < name.size(); ++i) {
        char c = name[i];
        bool digit = c >= '0' && c <= '9';
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (digit || alpha || c == '_') {
            if (++label > kLabelMax) return "valid_hostname: hostname label too long: " + shown;
            if (!digit) non_numeric = true;
        } else if (c == '.') {
            if (label == 0 || i + 1 == name.size())
                return "valid_hostname: misplaced delimiter: " + shown;
            label = 0;
        } else if (c == '-') {
            non_numeric = true;
            ++label;
            if (label == 1 || i + 1 == name.size() || name[i + 1] == '.')
                return "valid_hostname: misplaced hyphen: " + shown;
        } else {
            return "valid_hostname: invalid character " +
                   std::to_string(static_cast<unsigned char>(c)) + "(decimal): " + shown;
        }
    }
    if (!non_numeric) return "valid_hostname: numeric hostname: " + shown;
    if (name.size() > kNameMax)
        return "valid_hostname: bad length " + std::to_string(name.size()) + " for " + shown +
               "...";
    return std::nullopt;
}

bool valid_hostname(std::string_view name) {
    return !hostname_problem(name);
}

std::optional<std::string> next_braced_item(std::string_view s, size_t& pos,
                                            std::string_view separators) {
    pos = s.find_first_not_of(separators, pos);
    if (pos == std::string_view::npos) {
        pos = s.size();
        return std::nullopt;
    }
    int level = 0;
    size_t i = pos;
    for (; i < s.size(); ++i) {
        char c = s[i];
        if (c == '{')
            ++level;
        else if (level > 0 && c == '}')
            --level;
        else if (level == 0 && separators.find(c) != std::string_view::npos)
            break;
    }
    std::string w(s.substr(pos, i - pos));
    pos = i;
    return w;
}

} // namespace cqmgr::conf
