#include "cqmgr/conf/param_table.hpp"

#include "cqmgr/conf/main_cf.hpp"

#include <unistd.h>

namespace cqmgr::conf {

const ParamSpec* find_param(std::string_view name) {
    for (auto table : {global_params(), qmgr_params()})
        for (auto& p : table)
            if (p.name == name) return &p;
    return nullptr;
}

std::string system_hostname() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) < 0) return "localhost";
    return buf;
}

void register_defaults(MainCf& cf, const std::string& hostname, bool only_missing) {
    auto wanted = [&](std::string_view name) {
        return !only_missing || !cf.is_known(std::string(name));
    };
    for (auto table : {global_params(), qmgr_params()})
        for (auto& p : table)
            if (!p.computed && wanted(p.name))
                cf.set_default(std::string(p.name), std::string(p.def));
    if (!wanted("myhostname") && !wanted("mydomain")) return;
    // myhostname: the host name, made a FQDN with $mydomain (only when
    // main.cf sets it) or "localdomain".
    if (wanted("myhostname"))
        cf.set_default_fn("myhostname", [hostname](const MainCf& c) -> std::optional<std::string> {
            if (hostname.find('.') != std::string::npos) return hostname;
            return hostname + "." + (c.is_set("mydomain") ? c.str("mydomain") : "localdomain");
        });
    // mydomain: what follows the first dot of $myhostname.
    if (wanted("mydomain"))
        cf.set_default_fn("mydomain", [](const MainCf& c) -> std::optional<std::string> {
            std::string host = c.str("myhostname");
            auto dot = host.find('.');
            return dot == std::string::npos ? std::string("localdomain") : host.substr(dot + 1);
        });
}

void register_transport_defaults(MainCf& cf, const std::string& transport) {
    for (auto& s : transport_suffixes()) {
        std::string name = transport + std::string(s.suffix);
        if (cf.is_known(name)) continue;
        // Appended rather than `"$" + std::string(...)`: GCC 12 at -O3 reports
        // that operator+ (an insert at the front) as a -Wrestrict overlap.
        std::string reference = "$";
        reference += s.fallback;
        cf.set_default(name, reference);
    }
}

} // namespace cqmgr::conf
