// A parameter's list of lookup tables (see table_list.hpp).
#include "table_list.hpp"

#include "cqmgr/conf/config_error.hpp"

namespace cqmgr::qmgr {

TableList TableList::open(const std::vector<std::string>& specs, std::string param, Warn warn) {
    TableList out;
    out.param_ = std::move(param);
    out.warn_ = std::move(warn);
    // The warnings of reading a table, and later of a rule that hits its
    // matching limit (as it happens), name the parameter.
    auto warn_param = [warn = out.warn_, param = out.param_](const std::string& w) {
        if (warn) warn(param + ": " + w);
    };
    for (const auto& spec : specs) {
        if (spec.starts_with("pcre:") || spec.starts_with("regexp:")) {
            auto t = RegexTable::open(spec, warn_param);
            if (!t) throw conf::ConfigError({}, "open table " + spec + ": cannot be read");
            t->warn_on_limit(warn_param);
            out.tables_.emplace_back(std::move(*t));
        } else {
            out.tables_.emplace_back(conf::LookupTables::open({spec}));
        }
    }
    return out;
}

void TableList::refused(std::string_view key, const std::string& why) const {
    if (warn_) warn_(param_ + ": " + std::string(key) + ": " + why);
}

std::optional<std::string> TableList::answer(std::string_view key) const {
    for (const AnyTable& t : tables_)
        if (auto a = std::visit([&](const auto& table) { return table.find(key); }, t)) return a;
    return std::nullopt;
}

uint64_t TableList::limit_hits() const {
    uint64_t n = 0;
    for (const AnyTable& t : tables_)
        if (const auto* r = std::get_if<RegexTable>(&t)) n += r->limit_hits();
    return n;
}

} // namespace cqmgr::qmgr
