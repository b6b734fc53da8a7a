// The transports that follow MX records (see mx_transports.hpp).
#include "mx_transports.hpp"

#include "cqmgr/conf/master_cf.hpp"
#include "log.hpp"
#include "provider_match.hpp"

#include <strings.h>

namespace cqmgr::qmgr {

namespace {

bool equal_nocase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace

bool smtp_dns_disabled(std::string_view support_level, bool disable_dns_lookups) {
    if (support_level.empty()) return disable_dns_lookups;
    return equal_nocase(support_level, "disabled");
}

std::map<std::string, std::string> mx_lookup_transports(const conf::MainCf& cf,
                                                        const conf::QmgrParams& params) {
    conf::MasterCf master;
    if (!master.load_dir(params.config_directory)) {
        log::warn("providers by MX set are off (only destinations listed by name): " +
                  master.error());
        return {};
    }
    std::map<std::string, std::string> out;
    for (const conf::MasterService& s : master.services()) {
        // mx_lookup_wanted()'s check of the agent alone (any plain domain).
        if (s.type != "unix" || !mx_lookup_wanted(s.command, "example.com", "example.com"))
            continue;
        // A service's -o setting wins over main.cf, as in the agent itself;
        // a value's $references are expanded with main.cf's.
        std::string level, disable;
        try {
            auto o_level = s.override_value("smtp_dns_support_level");
            level = o_level ? cf.expand(*o_level) : cf.str("smtp_dns_support_level");
            auto o_disable = s.override_value("disable_dns_lookups");
            disable = o_disable ? cf.expand(*o_disable) : cf.str("disable_dns_lookups");
        } catch (const conf::ConfigError& e) {
            log::warn("providers: " + s.service + ": " + e.what());
            continue;
        }
        if (smtp_dns_disabled(level, equal_nocase(disable, "yes"))) continue;
        out.emplace(s.service, s.command);
    }
    return out;
}

} // namespace cqmgr::qmgr
