// Priority lanes: a message's class from the administrator's tables (see
// priority_class.hpp).
#include "priority_class.hpp"

#include "cqmgr/common/address.hpp"
#include "cqmgr/conf/config_error.hpp"

#include <algorithm>
#include <cctype>
#include <type_traits>

namespace cqmgr::qmgr {

std::optional<core::Lane> PriorityTables::parse(std::string_view answer) {
    while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.front())))
        answer.remove_prefix(1);
    while (!answer.empty() && std::isspace(static_cast<unsigned char>(answer.back())))
        answer.remove_suffix(1);
    std::string a(answer);
    std::transform(a.begin(), a.end(), a.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (a == "urgent") return core::Lane::urgent;
    if (a == "normal") return core::Lane::normal;
    if (a == "bulk") return core::Lane::bulk;
    return std::nullopt;
}

PriorityTables::Table PriorityTables::open_one(const std::string& spec, const Warn& warn) {
    if (spec.starts_with("pcre:") || spec.starts_with("regexp:")) {
        auto t = RegexTable::open(spec, warn);
        if (!t) throw conf::ConfigError({}, "open table " + spec + ": cannot be read");
        return std::move(*t);
    }
    return conf::LookupTables::open({spec});
}

PriorityTables PriorityTables::open(const std::vector<std::string>& maps,
                                    const std::vector<std::string>& header_maps, Warn warn) {
    PriorityTables out;
    out.warn_ = std::move(warn);
    auto warn_as = [&](const char* param) {
        return [param, &out](const std::string& w) {
            if (out.warn_) out.warn_(std::string(param) + ": " + w);
        };
    };
    for (const auto& spec : maps)
        out.maps_.push_back(open_one(spec, warn_as("cqmgr_priority_maps")));
    for (const auto& spec : header_maps)
        out.header_maps_.push_back(open_one(spec, warn_as("cqmgr_priority_header_maps")));
    // A rule that hits its matching limit is warned about as it happens.
    auto on_limit = [&](std::vector<Table>& tables, const char* param) {
        for (Table& t : tables)
            if (auto* r = std::get_if<RegexTable>(&t))
                r->warn_on_limit([warn = out.warn_, param](const std::string& w) {
                    if (warn) warn(std::string(param) + ": " + w);
                });
    };
    on_limit(out.maps_, "cqmgr_priority_maps");
    on_limit(out.header_maps_, "cqmgr_priority_header_maps");
    return out;
}

std::optional<core::Lane> PriorityTables::find(const std::vector<Table>& tables, const char* param,
                                               std::string_view key, MatchBudget& budget) const {
    for (const Table& t : tables) {
        std::optional<std::string> answer = table_find(t, key, budget);
        if (!answer) continue;
        if (auto lane = parse(*answer)) return lane;
        if (warn_)
            warn_(std::string(param) + ": " + std::string(key) + ": unknown class \"" + *answer +
                  "\" (expected urgent, normal or bulk)");
    }
    return std::nullopt;
}

std::optional<std::string> PriorityTables::answer(std::string_view key, bool header) const {
    for (const Table& t : header ? header_maps_ : maps_)
        if (auto a = std::visit([&](const auto& table) { return table.find(key); }, t)) return a;
    return std::nullopt;
}

std::optional<core::Lane>
PriorityTables::classify(std::string_view sender,
                         const std::vector<std::string>& rcpt_domains) const {
    if (maps_.empty()) return std::nullopt;
    MatchBudget budget; // one for the message's keys
    // The null sender has no address to look up.
    if (!sender.empty()) {
        if (auto lane = find(maps_, "cqmgr_priority_maps", sender, budget)) return lane;
        if (auto domain = split_address(sender).domain; !domain.empty())
            if (auto lane = find(maps_, "cqmgr_priority_maps", domain, budget)) return lane;
    }
    for (const auto& domain : rcpt_domains)
        if (!domain.empty())
            if (auto lane = find(maps_, "cqmgr_priority_maps", domain, budget)) return lane;
    return std::nullopt;
}

uint64_t PriorityTables::limit_hits() const {
    uint64_t n = 0;
    for (const auto* tables : {&maps_, &header_maps_})
        for (const Table& t : *tables)
            if (const auto* r = std::get_if<RegexTable>(&t)) n += r->limit_hits();
    return n;
}

std::optional<core::Lane>
PriorityTables::classify_headers(const std::vector<std::string>& lines) const {
    // One budget for the header block: up to 64 KiB of the sender's lines
    // cost a few limits' work at most.
    MatchBudget budget;
    for (const auto& line : lines) {
        if (budget.spent()) break;
        if (auto lane = find(header_maps_, "cqmgr_priority_header_maps", line, budget)) return lane;
    }
    return std::nullopt;
}

} // namespace cqmgr::qmgr
