#include "cqmgr/conf/scheduler_policy.hpp"

namespace cqmgr::conf {

bool scheduler_policy_known(std::string_view value) {
    return value == "rak" || value == "finch";
}

std::string read_scheduler_policy(const MainCf& cf, const std::string& name,
                                  const std::string& fallback) {
    if (!cf.is_known(name)) return fallback;
    std::string value = cf.str(name);
    if (!scheduler_policy_known(value))
        throw ConfigError(cf.where(name), "invalid " + name + " parameter value \"" + value +
                                              "\" (expected rak or finch)");
    return value;
}

} // namespace cqmgr::conf
