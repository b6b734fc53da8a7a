// cqmgr's own lookup tables (see lookup_table.hpp).
#include "cqmgr/conf/lookup_table.hpp"

#include "cqmgr/conf/config_error.hpp"
#include "cqmgr/conf/values.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace cqmgr::conf {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

// Adds one "key value" line (key ends at the first blank).
void add_line(std::map<std::string, std::string, std::less<>>& m, std::string_view line) {
    line = trim(line);
    if (line.empty()) return;
    size_t end = 0;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])))
        end++;
    // Postfix keeps the first of duplicate keys (with a warning).
    m.emplace(lower(line.substr(0, end)), std::string(trim(line.substr(end))));
}

void read_texthash(const std::string& spec, const std::string& path,
                   std::map<std::string, std::string, std::less<>>& m) {
    std::ifstream in(path);
    if (!in) throw ConfigError({}, "open table " + spec + ": " + std::strerror(errno));
    std::string line, logical;
    auto flush = [&] {
        add_line(m, logical);
        logical.clear();
    };
    while (std::getline(in, line)) {
        std::string_view l = line;
        if (trim(l).empty() || trim(l).front() == '#') continue;
        if (std::isspace(static_cast<unsigned char>(l.front()))) {
            logical += " ";
            logical += trim(l);
            continue;
        }
        flush();
        logical = line;
    }
    flush();
}

void read_inline(const std::string& spec, std::string_view body,
                 std::map<std::string, std::string, std::less<>>& m) {
    if (body.size() < 2 || body.front() != '{' || body.back() != '}')
        throw ConfigError({}, "table " + spec + ": expected inline:{ key=value, ... }");
    body = body.substr(1, body.size() - 2);
    size_t pos = 0;
    while (auto item = next_braced_item(body, pos, ", \t\r\n")) {
        std::string_view it = trim(*item);
        if (it.size() >= 2 && it.front() == '{' && it.back() == '}')
            it = trim(it.substr(1, it.size() - 2));
        auto eq = it.find('=');
        if (eq == std::string_view::npos)
            throw ConfigError({},
                              "table " + spec + ": missing '=' after \"" + std::string(it) + "\"");
        m.emplace(lower(trim(it.substr(0, eq))), std::string(trim(it.substr(eq + 1))));
    }
}

} // namespace

LookupTables LookupTables::open(const std::vector<std::string>& specs) {
    LookupTables out;
    for (const std::string& spec : specs) {
        auto colon = spec.find(':');
        if (colon == std::string::npos)
            throw ConfigError({}, "table " + spec + ": expected type:name");
        std::string type = spec.substr(0, colon);
        std::string name = spec.substr(colon + 1);
        Table t;
        if (type == "texthash")
            read_texthash(spec, name, t.entries);
        else if (type == "inline")
            read_inline(spec, name, t.entries);
        else if (type == "static")
            t.any = name;
        else
            throw ConfigError({}, "table " + spec + ": unsupported type \"" + type +
                                      "\" (cqmgr reads texthash, inline and static)");
        out.tables_.push_back(std::move(t));
    }
    return out;
}

std::optional<std::string> LookupTables::find(std::string_view key) const {
    std::string k = lower(key);
    for (const Table& t : tables_) {
        if (t.any) return t.any;
        if (auto it = t.entries.find(k); it != t.entries.end()) return it->second;
    }
    return std::nullopt;
}

} // namespace cqmgr::conf
