// Sender groups: a message's group from the administrator's tables (see
// sender_groups.hpp).
#include "sender_groups.hpp"

#include "address.hpp"
#include "cqmgr/common/address.hpp"
#include "cqmgr/conf/config_error.hpp"
#include "sender_limit.hpp"

#include <limits>

namespace cqmgr::qmgr {

namespace {
constexpr const char* param = "cqmgr_sender_limits";

} // namespace

SenderGroups SenderGroups::open(const std::vector<std::string>& maps, Warn warn) {
    SenderGroups out;
    out.warn_ = std::move(warn);
    auto warn_param = [w = out.warn_](const std::string& text) {
        if (w) w(std::string(param) + ": " + text);
    };
    for (const auto& spec : maps) {
        if (spec.starts_with("pcre:") || spec.starts_with("regexp:")) {
            auto t = RegexTable::open(spec, warn_param);
            if (!t) throw conf::ConfigError({}, "open table " + spec + ": cannot be read");
            t->warn_on_limit(warn_param);
            out.maps_.emplace_back(std::move(*t));
        } else {
            out.maps_.emplace_back(conf::LookupTables::open({spec}));
        }
    }
    return out;
}

std::optional<core::SenderLimit> SenderGroups::lookup(std::string_view key,
                                                      MatchBudget& budget) const {
    for (const Table& t : maps_) {
        std::optional<std::string> answer = table_find(t, key, budget);
        if (!answer) continue;
        auto limit = parse_sender_limit(*answer);
        if (limit) return *limit;
        if (warn_)
            warn_(std::string(param) + ": " + std::string(key) + ": bad value \"" + *answer +
                  "\": " + limit.error().message());
    }
    return std::nullopt;
}

std::optional<SenderGroups::Found> SenderGroups::find(std::string_view sender) const {
    // The null sender has no address to look up.
    if (maps_.empty() || sender.empty()) return std::nullopt;
    MatchBudget budget; // one for the message's keys
    if (auto limit = lookup(sender, budget)) return Found{lower(sender), *limit};
    if (auto domain = split_address(sender).domain; !domain.empty())
        if (auto limit = lookup(domain, budget)) return Found{lower(domain), *limit};
    return std::nullopt;
}

core::SenderGroup SenderGroups::group(std::string_view sender, core::Scheduler& sched) {
    auto found = find(sender);
    return found ? numbered(*found, sched) : 0;
}

core::SenderGroup SenderGroups::number(const std::string& name, core::Scheduler& sched) {
    if (auto it = numbers_.find(name); it != numbers_.end()) return it->second;
    // A group's name is the key that answered, so the tables answer it
    // as the key again while they still make it a group.
    auto found = find(name);
    return found && found->name == name ? numbered(*found, sched) : 0;
}

core::SenderGroup SenderGroups::numbered(const Found& found, core::Scheduler& sched) {
    if (auto it = numbers_.find(found.name); it != numbers_.end()) return it->second;
    if (numbers_.size() >= std::numeric_limits<core::SenderGroup>::max()) {
        if (!full_warned_ && warn_)
            warn_(std::string(param) + ": more than " + std::to_string(numbers_.size()) +
                  " sender groups: mail of new ones is not limited");
        full_warned_ = true;
        return 0;
    }
    auto g = static_cast<core::SenderGroup>(numbers_.size() + 1);
    numbers_.emplace(found.name, g);
    names_.push_back(found.name);
    sched.set_sender_limit(g, found.limit);
    return g;
}

} // namespace cqmgr::qmgr
