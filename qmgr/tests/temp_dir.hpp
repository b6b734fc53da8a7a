// The tests' scratch directory (cqmgr/test/temp_dir.hpp), under the name
// the daemon's control and admin-state tests know it by.
#pragma once

#include "cqmgr/test/temp_dir.hpp"

namespace cqmgr::qmgr {
using ::cqmgr::test::TempDir;
} // namespace cqmgr::qmgr
