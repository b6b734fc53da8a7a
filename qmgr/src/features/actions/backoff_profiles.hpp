// cqmgr_backoff_profiles: the named limit sets of the reply rules'
// `backoff PROFILE` action.  A list of lookup tables in Postfix's syntax
// (inline:, texthash:, static:, pcre:, regexp:), read before the jail,
// queried with a profile's name; the first table that has it answers, and
// its value is a profile (backoff_profile.hpp):
//
//   cqmgr_backoff_profiles = inline:{ slow = concurrency=2 rate=30/1m }
//
// A name no table has, or a value that is no profile, makes the rules that
// name it bad rules (ReplyActions warns when they match, `cqmgr check`
// lists them).
#pragma once

#include "any_table.hpp"
#include "backoff_profile.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::qmgr {

class BackoffProfiles {
  public:
    BackoffProfiles() = default;
    // Opens the tables (call before the jail); throws conf::ConfigError
    // as open_any_tables() does.
    static BackoffProfiles open(const std::vector<std::string>& maps, RegexTable::Warn warn);

    // Profile `name`, or why there is none: `no profile "slow" in
    // cqmgr_backoff_profiles`, or `cqmgr_backoff_profiles: bad value "..."
    // for "slow": ...`.
    Result<BackoffProfile, ActionError> find(std::string_view name) const;
    // `a` with the limits of its profile when it is a backoff (as it is
    // otherwise), or why that profile is none.
    Result<ReplyAction, ActionError> resolve(ReplyAction a) const;

  private:
    std::vector<AnyTable> maps_;
};

} // namespace cqmgr::qmgr
