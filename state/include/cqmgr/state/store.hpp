// The state store: one LMDB environment (a data file and its "-lock"
// file) holding a DestinationRecord per transport and destination, and the
// control socket's settings (control_record.hpp).
//
// LMDB commits are atomic and, with the default synchronous commits used
// here, durable: after a crash the store holds exactly the last committed
// batch.  LMDB does not check its pages, so before a store from an earlier
// run is used it is read through once in a child process (probe.hpp): a
// store that is truncated, damaged, of an unknown format, or that crashes
// or hangs the reader, is reported as a warning, moved aside to
// PATH.corrupt and replaced by an empty one.  A store that cannot be opened
// for another reason (permissions, a missing directory, a link or another
// owner's file where it should be) is left alone and the caller runs
// without one.
//
// Opened by root, every file operation of the store (LMDB's own opens of
// the data and lock files included) runs with the owner's effective ids
// (owner.hpp), so that nothing planted in a directory the owner holds can
// make root write where the owner could not.
//
// While open, the store survives damage to its file: each use checks the
// file's size and runs under a SIGBUS guard (map_guard.hpp); damage found
// then sets the file aside as at start-up and an empty store takes its
// place (rebuilds() counts those, so that a caller can write again what it
// keeps in memory).  A full map first loses its stale records, then grows
// up to max_map_size, then loses the least recently changed records of
// destinations that are not dead.
//
// A Store may be used from several threads; its calls are serialised.
#pragma once

#include "cqmgr/common/result.hpp"
#include "cqmgr/state/owner.hpp"
#include "cqmgr/state/record.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::state {

// Why a write to the store left it as it was.
struct WriteError {
    enum class Kind {
        set_aside, // the file was damaged and set aside, and no store took its place
        full,      // no room, even after making some
        lmdb,      // LMDB (or the system) refused; code says how
    };
    Kind kind = Kind::lmdb;
    int code = 0; // lmdb: LMDB's or the system's error number

    // "the store is full", "write: No space left on device", ...
    std::string message() const;
};

// Why a read from the store found nothing it could use.
struct ReadError {
    enum class Kind {
        set_aside, // the file was damaged and set aside, and no store took its place
        lmdb,      // LMDB (or the system) refused; code says how
    };
    Kind kind = Kind::lmdb;
    int code = 0; // lmdb: LMDB's or the system's error number

    // "the store is damaged and set aside", "read: Input/output error", ...
    std::string message() const;
};

class Store {
  public:
    using Warn = std::function<void(const std::string&)>;

    struct Options {
        // The largest the data file may grow to at first (LMDB maps this
        // much address space; the file grows only as pages are used).
        size_t map_size = size_t{256} << 20;
        // How far the map may grow when it is full and expiring stale
        // records did not make room (a little more while deleting records
        // to make room: deletions need pages too).
        size_t max_map_size = size_t{1} << 30;
        // Check a store from an earlier run in a child process first.
        bool probe = true;
        // How long that check may take before the store counts as damaged.
        std::chrono::seconds probe_timeout{10};
        // MDB_NOSYNC: commits are not flushed to disk (benchmarks only; a
        // system crash may then lose or damage the store).
        bool no_sync = false;
        // Whose files these are: run as root, the store acts with these
        // ids (owner.hpp) and takes over files an earlier version made as
        // root; none: the process's own.
        std::optional<Owner> owner;
    };

    // Opens the store at `path`, creating it (mode 0600) when it does not
    // exist, and replacing it by an empty one (with a warning) when it is
    // damaged.  nullptr (with a warning) when no store can be used.  Call
    // it while the process has a single thread (the probe forks).
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
        // Should the map be full: records not updated since `oldest`
        // whose destination is not dead at `now` go first (0: none).
        int64_t oldest = 0;
        int64_t now = 0;
    };
    // Writes `batch` in one transaction: all of it or, on failure, none of
    // it.  A record whose key is longer than LMDB allows (max_key_size())
    // is left out.
    Result<void, WriteError> apply(const Batch& batch);

    // Deletes the records not updated since `oldest` whose destination is
    // not dead at `now`; how many.
    size_t expire(int64_t oldest, int64_t now);

    // The control settings' document (control_record.hpp); nullopt when
    // the store holds none.
    Result<std::optional<std::string>, ReadError> get_control();
    // Replaces the control settings' document, in one transaction.
    Result<void, WriteError> put_control(std::string_view doc);

    // How many records the store holds.
    size_t count();
    size_t max_key_size() const { return max_key_; }
    const std::string& path() const { return path_; }
    // The map's size now.
    size_t map_size();
    // How often the file was found damaged while open and replaced.
    uint64_t rebuilds();
    // False once the file was found damaged and could not be replaced:
    // nothing is kept until the process starts again.
    bool usable();
    // What the store has to report since the last call (damage, a map
    // grown, records given up to make room), for the caller to log.
    std::vector<std::string> take_warnings();

  private:
    struct Env;
    struct Encoded;
    Store(std::string path, const Options& options, std::unique_ptr<Env> env);

    // With mu_ held:
    // Runs `op` (LMDB calls on env_) after a check of the file's size,
    // under the SIGBUS guard; an LMDB code, or one of store.cpp's own.
    template <class F> int run(F&& op);
    int write(const Encoded& e);
    // Calls `f(key, value)` for every record, in one read transaction.
    template <class F> int each_record(F f);
    int write_with_room(const Encoded& e, int64_t oldest, int64_t now);
    // How much of the map is in use, in percent (its free pages counted
    // only when the file has grown past the high-water mark).
    size_t used_percent();
    // Expires, grows the map, gives up records: as far as needed to bring
    // the use of the map under the high-water mark (`full`: a write found
    // it full).
    void make_room(int64_t oldest, int64_t now, bool full);
    int grow(size_t to);
    // Commits a transaction that changes nothing.
    int touch();
    template <class Victim> size_t delete_where(Victim victim);
    size_t expire_locked(int64_t oldest, int64_t now);
    size_t evict(int64_t now);
    // Sets a damaged file aside and opens an empty store in its place;
    // false when that failed (the store is then unusable).
    bool recover(int rc);
    void close_env();
    void note(std::string text) { warnings_.push_back(std::move(text)); }

    std::mutex mu_;
    std::string path_;
    Options options_;
    std::unique_ptr<Env> env_;
    size_t max_key_ = 0;
    size_t map_size_ = 0;
    // What the last check of the file's size found (for the warning).
    off_t shrunk_to_ = 0;
    off_t needed_ = 0;
    uint64_t rebuilds_ = 0;
    bool unusable_ = false;
    // The control document last read or written: written again into a
    // store that replaces a damaged one.
    std::optional<std::string> control_doc_;
    std::vector<std::string> warnings_;
};

// What a check of the store at a path found.
enum class Health {
    ok,          // readable, our format (or there is no file yet)
    damaged,     // truncated, corrupt or of an unknown format: move it aside
    unreachable, // cannot be opened (permissions, missing directory): leave it
};

// The verdict on a store, and what was wrong with it ("" when ok).
struct StoreCheck {
    Health health = Health::ok;
    std::string why;
};

// Reads the whole store at `path` in this process: opens it read-only,
// checks its size against what its header says, its format version, and
// walks every record.
StoreCheck verify_store(const std::string& path, size_t map_size);

} // namespace cqmgr::state
