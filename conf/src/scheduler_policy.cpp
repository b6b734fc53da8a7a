#include "cqmgr/conf/scheduler_policy.hpp"

namespace cqmgr::conf {

bool scheduler_policy_known(std::string_view value) {
    return value == "rak" || value == "finch";
}

void check_scheduler_policy(const MainCf& cf, const std::string& name, const std::string& value) {
    if (!scheduler_policy_known(value))
        throw ConfigError(cf.where(name), "invalid " + name + " parameter value \"" + value +
                                              "\" (expected rak or finch)");
}

} // namespace cqmgr::conf
