// Which transports follow the recipient domain's MX records, so that only
// their destinations are looked up for a provider: read from master.cf and
// main.cf before the jail (master.cf is out of reach afterwards).
#pragma once

#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/qmgr_params.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

// True when smtp(8) makes no DNS lookups with these settings, as it reads
// them: smtp_dns_support_level "disabled" (any case); an empty level falls
// back to disable_dns_lookups.
bool smtp_dns_disabled(std::string_view support_level, bool disable_dns_lookups);

// Each unix service of master.cf whose delivery agent follows MX records
// (mx_lookup_wanted()'s agent: the command field "smtp") and for which DNS
// lookups are not disabled (its -o settings first, then main.cf), mapped to
// that command.  An unreadable master.cf gives a warning and none (the
// providers then go by name only).
std::map<std::string, std::string> mx_lookup_transports(const conf::MainCf& cf,
                                                        const conf::QmgrParams& params);

} // namespace cqmgr::qmgr
