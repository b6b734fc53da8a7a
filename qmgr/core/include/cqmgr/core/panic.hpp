// The core's answer to a broken invariant.
#pragma once

#include <string>

namespace cqmgr::core {

// Aborts with a message: a broken scheduler invariant.
[[noreturn]] void panic(const std::string& what);

} // namespace cqmgr::core
