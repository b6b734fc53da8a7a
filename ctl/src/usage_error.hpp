// A mistake on cqmgrctl's command line: printed with the usage text, and
// cqmgrctl exits with EX_USAGE.
#pragma once

#include <stdexcept>

namespace cqmgr::ctl {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

} // namespace cqmgr::ctl
