// The destination state store: one LMDB environment (a data file and its
// "-lock" file) holding a DestinationRecord per transport and destination.
//
// LMDB commits are atomic and, with the default synchronous commits used
// here, durable: after a crash the store holds exactly the last committed
// batch.  LMDB does not check its pages, so before a store from an earlier
// run is used it is read through once in a child process (probe.hpp): a
// store that is truncated, damaged, of an unknown format, or that crashes
// or hangs the reader, is reported as a warning, moved aside to
// PATH.corrupt and replaced by an empty one.  A store that cannot be opened
// for another reason (permissions, a missing directory) is left alone and
// the caller runs without one.
//
// A Store is used by one thread at a time.
#pragma once

#include "cqmgr/state/record.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cqmgr::state {

class Store {
  public:
    using Warn = std::function<void(const std::string&)>;

    struct Options {
        // The largest the data file may grow to (LMDB maps this much
        // address space; the file grows only as pages are used).
        size_t map_size = size_t{256} << 20;
        // Check a store from an earlier run in a child process first.
        bool probe = true;
        // How long that check may take before the store counts as damaged.
        std::chrono::seconds probe_timeout{10};
        // MDB_NOSYNC: commits are not flushed to disk (benchmarks only; a
        // system crash may then lose or damage the store).
        bool no_sync = false;
    };

    // Opens the store at `path`, creating it (mode 0600) when it does not
    // exist, and replacing it by an empty one (with a warning) when it is
    // damaged.  nullptr (with a warning) when no store can be used.
    static std::unique_ptr<Store> open(const std::string& path, const Warn& warn,
                                       const Options& options);
    static std::unique_ptr<Store> open(const std::string& path, const Warn& warn) {
        return open(path, warn, Options{});
    }
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    struct Loaded {
        std::vector<DestinationRecord> records;
        size_t stale = 0; // deleted: not updated since `oldest`
        size_t bad = 0;   // deleted: not a record this version can read
    };
    // Every record updated at or after `oldest`; older records and records
    // that do not decode are deleted from the store (one warning for the
    // latter).
    Loaded load(int64_t oldest, const Warn& warn);

    struct Batch {
        std::vector<DestinationRecord> puts;
        std::vector<std::string> deletes; // record_key()s
    };
    // Writes `batch` in one transaction: all of it or, on failure (false,
    // `error` set), none of it.  A record whose key is longer than LMDB
    // allows (max_key_size()) is left out.
    bool apply(const Batch& batch, std::string& error);

    // How many records the store holds.
    size_t count();
    size_t max_key_size() const;
    const std::string& path() const { return path_; }

  private:
    struct Env;
    Store(std::string path, std::unique_ptr<Env> env);

    std::string path_;
    std::unique_ptr<Env> env_;
};

// What a check of the store at a path found.
enum class Health {
    ok,          // readable, our format (or there is no file yet)
    damaged,     // truncated, corrupt or of an unknown format: move it aside
    unreachable, // cannot be opened (permissions, missing directory): leave it
};

// Reads the whole store at `path` in this process: opens it read-only,
// checks its size against what its header says, its format version, and
// walks every record.  `why` says what was wrong.
Health verify_store(const std::string& path, size_t map_size, std::string& why);

} // namespace cqmgr::state
