// Checks a store in a child process, so that a store damaged in a way that
// makes LMDB read out of bounds or loop costs a dead child, not the daemon.
#pragma once

#include "cqmgr/state/store.hpp"

namespace cqmgr::state {

// Runs verify_store() on `path` in a forked child that gets `timeout` to
// finish.  A child killed by a signal, or timed out, means damaged.  The
// child gives up root for `owner` first (owner.hpp): it opens the store and
// its lock file by name, as mail_owner.  Call it while the process has a
// single thread.
StoreCheck probe_store(const std::string& path, size_t map_size, std::chrono::seconds timeout,
                       const std::optional<Owner>& owner = std::nullopt);

} // namespace cqmgr::state
