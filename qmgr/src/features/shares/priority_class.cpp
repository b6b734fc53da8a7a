// Priority lanes: a message's class from the administrator's tables (see
// priority_class.hpp).
#include "priority_class.hpp"

#include "cqmgr/common/address.hpp"

#include <algorithm>
#include <cctype>

namespace cqmgr::qmgr {

std::optional<core::Lane> PriorityTables::parse(std::string_view answer) {
    std::string a(trim_blanks(answer));
    std::transform(a.begin(), a.end(), a.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (a == "urgent") return core::Lane::urgent;
    if (a == "normal") return core::Lane::normal;
    if (a == "bulk") return core::Lane::bulk;
    return std::nullopt;
}

PriorityTables PriorityTables::open(const std::vector<std::string>& maps,
                                    const std::vector<std::string>& header_maps, Warn warn) {
    PriorityTables out;
    out.maps_ = TableList::open(maps, "cqmgr_priority_maps", warn);
    out.header_maps_ = TableList::open(header_maps, "cqmgr_priority_header_maps", warn);
    return out;
}

std::optional<core::Lane> PriorityTables::lane_of(const std::string& answer, std::string& why) {
    auto lane = parse(answer);
    if (!lane) why = "unknown class \"" + answer + "\" (expected urgent, normal or bulk)";
    return lane;
}

std::optional<std::string> PriorityTables::answer(std::string_view key, bool header) const {
    return (header ? header_maps_ : maps_).answer(key);
}

std::optional<core::Lane>
PriorityTables::classify(std::string_view sender,
                         const std::vector<std::string>& rcpt_domains) const {
    if (maps_.empty()) return std::nullopt;
    MatchBudget budget; // one for the message's keys
    // The null sender has no address to look up.
    if (!sender.empty()) {
        if (auto lane = maps_.find(sender, budget, lane_of)) return lane;
        if (auto domain = split_address(sender).domain; !domain.empty())
            if (auto lane = maps_.find(domain, budget, lane_of)) return lane;
    }
    for (const auto& domain : rcpt_domains)
        if (!domain.empty())
            if (auto lane = maps_.find(domain, budget, lane_of)) return lane;
    return std::nullopt;
}

uint64_t PriorityTables::limit_hits() const {
    return maps_.limit_hits() + header_maps_.limit_hits();
}

std::optional<core::Lane>
PriorityTables::classify_headers(const std::vector<std::string>& lines) const {
    return header_maps_.find_in_headers(lines, lane_of);
}

} // namespace cqmgr::qmgr
