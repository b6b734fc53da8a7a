// Sender groups: a message's group from the administrator's tables (see
// sender_groups.hpp).
#include "sender_groups.hpp"

#include "address.hpp"
#include "cqmgr/common/address.hpp"
#include "sender_limit.hpp"

#include <limits>

namespace cqmgr::qmgr {

namespace {
constexpr const char* param = "cqmgr_sender_limits";

// The limit `answer` gives; `why` says what is wrong with another.
std::optional<core::SenderLimit> limit_of(const std::string& answer, std::string& why) {
    auto limit = parse_sender_limit(answer);
    if (limit) return *limit;
    why = "bad value \"" + answer + "\": " + limit.error().message();
    return std::nullopt;
}

} // namespace

SenderGroups SenderGroups::open(const std::vector<std::string>& maps, Warn warn,
                                const std::vector<std::string>& class_header_maps) {
    SenderGroups out;
    out.maps_ = TableList::open(maps, param, warn);
    out.class_maps_ = TableList::open(class_header_maps, "cqmgr_sender_class_header_maps", warn);
    out.warn_ = std::move(warn);
    return out;
}

std::optional<std::string> SenderGroups::class_name(const std::string& answer, std::string& why) {
    std::string_view a = trim_blanks(answer);
    // Printable and without blanks: a name that logs, explain and
    // cqmgrctl show as it is.
    bool word = !a.empty() && a.size() <= max_class;
    for (unsigned char c : a)
        word = word && c > ' ' && c < 0x7f;
    if (word) return lower(a);
    why = "bad class name \"" + answer + "\": expected one word of at most " +
          std::to_string(max_class) + " printable characters";
    return std::nullopt;
}

std::optional<core::SenderLimit> SenderGroups::lookup(std::string_view key,
                                                      MatchBudget& budget) const {
    return maps_.find(key, budget, limit_of);
}

std::optional<SenderGroups::Found> SenderGroups::find(std::string_view sender,
                                                      const HeaderLines& headers) const {
    if (maps_.empty()) return std::nullopt;
    MatchBudget budget; // one for the message's keys
    // The null sender has no address to look up.
    if (!sender.empty()) {
        if (auto limit = lookup(sender, budget)) return Found{lower(sender), *limit};
        if (auto domain = split_address(sender).domain; !domain.empty())
            if (auto limit = lookup(domain, budget)) return Found{lower(domain), *limit};
    }
    // The header class, only now: it costs a read of the header block.
    if (class_maps_.empty() || !headers) return std::nullopt;
    auto name = class_maps_.find_in_headers(headers(), class_name);
    if (!name) return std::nullopt;
    if (auto limit = lookup(*name, budget)) return Found{"class " + *name, *limit, true};
    return std::nullopt;
}

core::SenderGroup SenderGroups::group(std::string_view sender, core::Scheduler& sched,
                                      const HeaderLines& headers) {
    auto found = find(sender, headers);
    return found ? numbered(*found, sched) : 0;
}

core::SenderGroup SenderGroups::number(const std::string& name, core::Scheduler& sched) {
    // An address or domain group first, as group() numbers them apart.
    for (const auto& numbers : numbers_)
        if (auto it = numbers.find(name); it != numbers.end()) return it->second;
    // A group's name is the key that answered (a class's with "class "
    // before it), so the tables answer it as the key again while they
    // still make it a group.
    std::optional<Found> found;
    if (name.starts_with("class ")) {
        MatchBudget budget;
        if (auto limit = lookup(std::string_view(name).substr(6), budget))
            found = Found{name, *limit, true};
    } else if (auto f = find(name); f && f->name == name) {
        found = f;
    }
    return found ? numbered(*found, sched) : 0;
}

core::SenderGroup SenderGroups::numbered(const Found& found, core::Scheduler& sched) {
    auto& numbers = numbers_[found.header_class ? 1 : 0];
    if (auto it = numbers.find(found.name); it != numbers.end()) return it->second;
    if (names_.size() >= std::numeric_limits<core::SenderGroup>::max()) {
        if (!full_warned_ && warn_)
            warn_(std::string(param) + ": more than " + std::to_string(names_.size()) +
                  " sender groups: mail of new ones is not limited");
        full_warned_ = true;
        return 0;
    }
    auto g = static_cast<core::SenderGroup>(names_.size() + 1);
    numbers.emplace(found.name, g);
    names_.push_back(found.name);
    sched.set_sender_limit(g, found.limit);
    return g;
}

} // namespace cqmgr::qmgr
