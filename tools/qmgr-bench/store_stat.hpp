// The size and record count of cqmgr's LMDB state store, read while the
// daemon runs.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

struct StoreStat {
    bool present = false;      // the data file exists
    std::uint64_t bytes = 0;   // its size
    std::int64_t records = -1; // entries in all its named databases; -1 if unread
    std::string error;         // why records could not be read
};

// Stats the store at `path` (a data file with `path`-lock next to it).
// The records are counted in a child process, in a read transaction that
// registers as a reader in the lock file, so that the daemon's writer
// neither reuses the pages being read nor is held up; a damaged or
// shrinking file can then only take the child down, never the benchmark.
// Nothing is read until the lock file exists (LMDB would create it, as
// root).
StoreStat read_store_stat(const std::string& path);

} // namespace bench
