#include "regex_table.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fstream>
#include <pcre2.h>
#include <regex.h>
#include <sstream>

namespace cqmgr::qmgr {

// A compiled pattern: PCRE2 code, or a POSIX regex_t.
struct RegexTable::Pattern {
    pcre2_code* pcre = nullptr;
    pcre2_match_data* match = nullptr;
    regex_t posix{};
    bool is_posix = false;

    ~Pattern() {
        if (match) pcre2_match_data_free(match);
        if (pcre) pcre2_code_free(pcre);
        if (is_posix) regfree(&posix);
    }
    bool matches(std::string_view key) const {
        if (!is_posix)
            return pcre2_match(pcre, reinterpret_cast<PCRE2_SPTR>(key.data()), key.size(), 0, 0,
                               match, nullptr) >= 0;
        std::string z(key); // regexec wants a C string
        return regexec(&posix, z.c_str(), 0, nullptr, 0) == 0;
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

// Compiles `pattern` with Postfix's flags; an error text, or empty.
std::string compile(RegexTable::Pattern& p, bool posix, const std::string& pattern,
                    const std::string& flags) {
    bool caseless = true;
    bool extended = true; // regexp: x toggles extended syntax
    uint32_t options = 0;
    for (char f : flags) {
        switch (f) {
        case 'i':
            caseless = !caseless;
            break;
        case 'm':
            if (!posix) options |= PCRE2_MULTILINE;
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
        int cflags = REG_NOSUB | (caseless ? REG_ICASE : 0) | (extended ? REG_EXTENDED : 0);
        int rc = regcomp(&p.posix, pattern.c_str(), cflags);
        if (rc != 0) {
            char buf[256];
            regerror(rc, &p.posix, buf, sizeof buf);
            return buf;
        }
        p.is_posix = true;
        return {};
    }
    if (caseless) options |= PCRE2_CASELESS;
    int err = 0;
    PCRE2_SIZE offset = 0;
    p.pcre = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                           &err, &offset, nullptr);
    if (!p.pcre) {
        PCRE2_UCHAR buf[256];
        pcre2_get_error_message(err, buf, sizeof buf);
        return reinterpret_cast<const char*>(buf) + std::string(" at offset ") +
               std::to_string(offset);
    }
    p.match = pcre2_match_data_create_from_pattern(p.pcre, nullptr);
    return {};
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
    bool posix = type == "regexp";
    for (const auto& [number, line] : logical_lines(text)) {
        auto bad = [&](const std::string& why) {
            warn(type + ":" + name + ", line " + std::to_string(number) + ": " + why +
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
        table.rules_.push_back(Rule{std::move(p), negate, std::move(result)});
    }
    return table;
}

std::optional<std::string> RegexTable::find(std::string_view key) const {
    for (const Rule& r : rules_)
        if (r.pattern->matches(key) != r.negate) return r.result;
    return std::nullopt;
}

} // namespace cqmgr::qmgr
