// Opening the state store (cqmgr_state_database) before the jail: the
// destination records (destination_state.hpp) and the control settings
// (admin_state.hpp) in one LMDB environment, opened as mail_owner
// (state/owner.hpp; docs/design.md, "What is opened before the jail").
#pragma once

#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/state/store.hpp"

#include <memory>

namespace cqmgr::qmgr {

// Opens the store that cqmgr_state_database names (before the jail: it may
// be out of reach afterwards), rebuilding a damaged one with a warning,
// with mail_owner's ids when the process runs as root, and imports an
// earlier version's cqmgr-control.json once.  nullptr when the parameter
// is empty or no store can be used (a warning says why).  Call it while
// the process has a single thread.
std::shared_ptr<state::Store> open_state_store(const conf::QmgrParams& params);

} // namespace cqmgr::qmgr
