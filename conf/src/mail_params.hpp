// The global parameters as every Postfix daemon reads them at start-up
// (mail_params_init): in Postfix's order, with its checks in between, so
// that the first error is the one stock reports first.
#pragma once

#include "table_reader.hpp"

namespace cqmgr::conf {

// Reads global_params() with `r`, checking as Postfix does: the
// compatibility level, syslog_facility, the host names, the accounts (with
// options.check_accounts), myorigin (read from a file with
// options.myorigin_from_file), relayhost and the VERP delimiters.
void read_mail_params(TableReader& r, const MainCf& cf, QmgrParams& q,
                      const QmgrParams::Options& options);

} // namespace cqmgr::conf
