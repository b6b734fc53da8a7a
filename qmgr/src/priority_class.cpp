// Priority lanes: a message's class from the administrator's tables (see
// priority_class.hpp).
#include "priority_class.hpp"

#include "cqmgr/conf/config_error.hpp"

#include <algorithm>
#include <cctype>

namespace cqmgr::qmgr {

std::string_view address_domain(std::string_view address) {
    size_t at = address.rfind('@');
    return at == std::string_view::npos ? std::string_view() : address.substr(at + 1);
}

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
    return out;
}

std::optional<core::Lane> PriorityTables::find(const std::vector<Table>& tables, const char* param,
                                               std::string_view key) const {
    for (const Table& t : tables) {
        std::optional<std::string> answer =
            std::visit([&](const auto& table) { return table.find(key); }, t);
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
    // The null sender has no address to look up.
    if (!sender.empty()) {
        if (auto lane = find(maps_, "cqmgr_priority_maps", sender)) return lane;
        if (auto domain = address_domain(sender); !domain.empty())
            if (auto lane = find(maps_, "cqmgr_priority_maps", domain)) return lane;
    }
    for (const auto& domain : rcpt_domains)
        if (!domain.empty())
            if (auto lane = find(maps_, "cqmgr_priority_maps", domain)) return lane;
    return std::nullopt;
}

std::optional<core::Lane>
PriorityTables::classify_headers(const std::vector<std::string>& lines) const {
    for (const auto& line : lines)
        if (auto lane = find(header_maps_, "cqmgr_priority_header_maps", line)) return lane;
    return std::nullopt;
}

} // namespace cqmgr::qmgr
