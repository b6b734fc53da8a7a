#include "table_reader.hpp"

#include "cqmgr/conf/values.hpp"

#include <stdexcept>

namespace cqmgr::conf {

namespace {

// Reads one parameter with its type, default, bounds and check.
QmgrParams::Value read_param(const MainCf& cf, const ParamSpec& p) {
    std::string name(p.name);
    switch (p.type) {
    case ParamType::String: {
        auto v = cf.str(name, p.def, static_cast<int>(p.min), static_cast<int>(p.max));
        if (p.check) p.check(cf, name, v);
        return v;
    }
    case ParamType::Int: {
        auto v = cf.integer(name, parse_int(p.def).value_or(0), p.min, p.max);
        // To Postfix a minimum of 0 means "no bound"; cqmgr's numbers are
        // never negative.
        if (p.reader == ParamReader::Cqmgr && v < 0)
            throw ConfigError(cf.where(name),
                              "invalid " + name + " parameter value " + std::to_string(v) + " < 0");
        return v;
    }
    case ParamType::Long:
        return cf.long_integer(name, parse_long(p.def).value_or(0), p.min, p.max);
    case ParamType::Bool:
        return cf.boolean(name, p.def == "yes");
    case ParamType::Time:
        return cf.time(name, p.def, 's', p.min, p.max);
    case ParamType::Percent:
        return cf.percent(name, parse_int(p.def).value_or(0));
    }
    return std::string();
}

// Splits a list of tables: items end at commas and blanks, except inside
// {...} (inline:{ a=1, b=2 }).
std::vector<std::string> split_tables(const std::string& text) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (auto item = next_braced_item(text, pos, ", \t\r\n"))
        out.push_back(*item);
    return out;
}

} // namespace

void TableReader::read(std::span<const ParamSpec> table, std::string_view first,
                       std::string_view last) {
    bool on = false;
    for (auto& p : table) {
        if (p.name == first) on = true;
        if (on && p.reader != ParamReader::Master)
            out_.values[std::string(p.name)] = read_param(cf_, p);
        if (p.name == last) return;
    }
}

void TableReader::fill(std::span<const ParamSpec> table) {
    using K = ParamField::Kind;
    for (auto& p : table) {
        const ParamField& f = p.field;
        if (f.kind == K::None) continue;
        const QmgrParams::Value& v = get(p.name);
        switch (f.kind) {
        case K::None:
            break;
        case K::Number:
            out_.*f.number = std::get<int64_t>(v);
            break;
        case K::Flag:
            out_.*f.flag = std::get<bool>(v);
            break;
        case K::Text:
            out_.*f.text = std::get<std::string>(v);
            break;
        case K::Words:
            out_.*f.list = split_list(std::get<std::string>(v));
            break;
        case K::Tables:
            out_.*f.list = split_tables(std::get<std::string>(v));
            break;
        }
    }
}

void TableReader::fatal_main_cf(const std::string& name, const std::string& text,
                                const std::string& warning) const {
    throw ConfigError(cf_.where(name), "file " + s("config_directory") + "/main.cf: " + text, {},
                      warning);
}

const QmgrParams::Value& TableReader::get(std::string_view n) const {
    auto it = out_.values.find(n);
    if (it == out_.values.end()) throw std::logic_error("parameter not read: " + std::string(n));
    return it->second;
}

} // namespace cqmgr::conf
