// The backoff profiles' tables (see backoff_profiles.hpp).
#include "backoff_profiles.hpp"

namespace cqmgr::qmgr {

namespace {
constexpr const char* param = "cqmgr_backoff_profiles";
} // namespace

BackoffProfiles BackoffProfiles::open(const std::vector<std::string>& maps, RegexTable::Warn warn) {
    BackoffProfiles out;
    out.maps_ = open_any_tables(maps, [warn = std::move(warn)](const std::string& w) {
        if (warn) warn(std::string(param) + ": " + w);
    });
    return out;
}

Result<BackoffProfile, ActionError> BackoffProfiles::find(std::string_view name) const {
    MatchBudget budget; // one for the name
    for (const AnyTable& t : maps_) {
        std::optional<std::string> value = table_find(t, name, budget);
        if (!value) continue;
        auto p = parse_backoff_profile(*value);
        if (!p)
            return Failure{ActionError{std::string(param) + ": bad value \"" + *value +
                                       "\" for \"" + std::string(name) +
                                       "\": " + p.error().message()}};
        return *p;
    }
    return Failure{ActionError{"no profile \"" + std::string(name) + "\" in " + param}};
}

Result<ReplyAction, ActionError> BackoffProfiles::resolve(ReplyAction a) const {
    if (a.kind != ReplyAction::Kind::backoff) return a;
    auto p = find(a.profile);
    if (!p) return Failure{p.error()};
    return with_profile(std::move(a), *p);
}

} // namespace cqmgr::qmgr
