// The LMDB store: three named databases in one environment, "meta" (the
// key "format" holds the store's format version), "destinations" (one
// record per record_key()) and "control" (the key "settings" holds the
// control settings' document).
#include "cqmgr/state/store.hpp"

#include "cqmgr/state/probe.hpp"
#include "map_guard.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace cqmgr::state {

namespace {

constexpr const char* meta_db = "meta";
constexpr const char* records_db = "destinations";
constexpr const char* control_db = "control";
constexpr std::string_view format_key = "format";
constexpr std::string_view format_version = "1";
constexpr std::string_view control_key = "settings";
constexpr const char* not_kept = "; destination state and control settings are not kept";

// The first four bytes of LMDB's meta page (after its page header) and of
// its lock file.
constexpr uint32_t lmdb_magic = 0xBEEFC0DE;
constexpr off_t data_magic_at = 16;
constexpr off_t lock_magic_at = 0;

// Codes of the store's own, next to LMDB's and errno's.
constexpr int shrunk_rc = -1;    // the file is shorter than its header says
constexpr int fault_rc = -2;     // a SIGBUS cut the use of the map short
constexpr int set_aside_rc = -3; // damaged earlier and not replaced

// Deletions per transaction when records are expired or given up: the
// first transactions are small, so that what they free is soon there for
// the next ones (LMDB reuses a freed page from the second transaction
// after the one that freed it).
constexpr size_t first_delete_chunk = 32;
constexpr size_t max_delete_chunk = 1024;
// Room is made when more than this share of the map (percent) is in use,
// so that the deletions themselves, which need pages too, find some.
constexpr size_t high_water = 90;
// How much the map may grow past max_map_size, a step at a time, when a
// batch larger than the room left finds the map full and even deletions
// find no page.
constexpr size_t room_step = size_t{1} << 20;

MDB_val val(std::string_view s) {
    return MDB_val{s.size(), const_cast<char*>(s.data())};
}

std::string_view view(const MDB_val& v) {
    return {static_cast<const char*>(v.mv_data), v.mv_size};
}

std::string lmdb_error(const char* what, int rc) {
    return std::string(what) + ": " + mdb_strerror(rc);
}

// Errors that say the store cannot be reached, as opposed to damaged.
bool unreachable_error(int rc) {
    return rc == EACCES || rc == EPERM || rc == ENOENT || rc == ENOTDIR || rc == EROFS ||
           rc == ENOMEM || rc == EMFILE || rc == ENFILE;
}

// Codes that say the file is damaged.
bool damage_rc(int rc) {
    return rc == shrunk_rc || rc == fault_rc || rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
           rc == MDB_INVALID;
}

std::string mib(size_t bytes) {
    return std::to_string(bytes >> 20) + " MiB";
}

// A read-only transaction that ends with its scope.
struct ReadTxn {
    MDB_txn* txn = nullptr;
    ~ReadTxn() {
        if (txn) mdb_txn_abort(txn);
    }
};

// Moves the damaged store at `path` (and its lock file) out of the way.
bool move_aside(const std::string& path, const std::string& why, const Store::Warn& warn) {
    const std::string aside = path + ".corrupt";
    const std::string lock = path + "-lock";
    if (::rename(path.c_str(), aside.c_str()) == 0) {
        ::unlink(lock.c_str());
        warn("state: " + path + " is damaged (" + why + "); moved to " + aside +
             ", starting with an empty store");
        return true;
    }
    int rename_errno = errno;
    if (::unlink(path.c_str()) == 0) {
        ::unlink(lock.c_str());
        warn("state: " + path + " is damaged (" + why + "); removed (rename: " +
             std::strerror(rename_errno) + "), starting with an empty store");
        return true;
    }
    warn("state: " + path + " is damaged (" + why +
         ") and cannot be removed: " + std::strerror(errno) + not_kept);
    return false;
}

// Takes over for `owner` a file of the store that an earlier version made
// as root: opened without following a link (owner.hpp), and only a
// regular root file of mode 0600 with one link that starts like LMDB's
// files (at `magic_at`), in a directory of the owner's.  Such a file can
// only have been made by cqmgr itself: whoever holds mail_owner can move
// files into the directory, but not make root's, and none of Postfix's
// root files there is an LMDB file.
void adopt(const std::string& path, const Owner& owner, off_t magic_at) {
    int fd = open_no_link(path, owner, O_RDONLY);
    if (fd < 0) return;
    struct stat st;
    uint32_t magic = 0;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && st.st_nlink == 1 &&
        (st.st_mode & 077) == 0 &&
        ::pread(fd, &magic, sizeof magic, magic_at) == static_cast<ssize_t>(sizeof magic) &&
        magic == lmdb_magic) {
        if (::fchown(fd, owner.uid, owner.gid) < 0) {
            // Left as it is: the owner cannot open it, which is reported.
        }
    }
    ::close(fd);
}

// An LMDB environment handle, closed with its scope.
struct Handle {
    MDB_env* env = nullptr;
    MDB_dbi records = 0;
    ~Handle() { close(); }
    // Creates the handle and opens `path` with `flags`; an LMDB or errno
    // code on failure.
    int open(const std::string& path, unsigned flags, size_t map_size, unsigned max_dbs) {
        int rc = mdb_env_create(&env);
        if (rc == 0) rc = mdb_env_set_maxdbs(env, max_dbs);
        if (rc == 0) rc = mdb_env_set_mapsize(env, map_size);
        if (rc == 0) rc = mdb_env_open(env, path.c_str(), flags | MDB_NOSUBDIR | MDB_NOTLS, 0600);
        return rc;
    }
    // Closes the environment; one whose files were cut is left unclosed
    // (closing touches the lock file's map) and its memory is lost.
    void close() {
        MDB_env* e = env;
        env = nullptr;
        if (e) detail::map_guarded([e] { mdb_env_close(e); });
    }
};

} // namespace

struct Store::Env : Handle {
    MDB_dbi control = 0;
    int fd = -1; // the data file's, LMDB's own
    dev_t dev = 0;
    ino_t ino = 0;
    size_t page = 4096;
    size_t map = 0; // the map's size when opened (an earlier run may have grown it)
};

// A batch's keys and values as bytes, made before any LMDB call (nothing
// is allocated under the map guard).
struct Store::Encoded {
    std::vector<std::pair<std::string, std::string>> puts;
    const std::vector<std::string>* deletes = nullptr;
    std::optional<std::string_view> control;
};

StoreCheck verify_store(const std::string& path, size_t map_size) {
    struct stat st;
    if (::stat(path.c_str(), &st) < 0) {
        if (errno == ENOENT) return {Health::ok, ""};
        return {Health::unreachable, std::string("stat: ") + std::strerror(errno)};
    }
    if (!S_ISREG(st.st_mode)) return {Health::damaged, "not a regular file"};
    // An environment starts with two meta pages.
    long page = ::sysconf(_SC_PAGESIZE);
    if (st.st_size < 2 * page)
        return {Health::damaged, "truncated to " + std::to_string(st.st_size) + " bytes"};
    Handle e;
    int rc = e.open(path, MDB_RDONLY, map_size, 3);
    if (rc != 0)
        return {unreachable_error(rc) ? Health::unreachable : Health::damaged,
                lmdb_error("open", rc)};
    // Pages past the end of the file would fault when mapped: a truncated
    // file must be caught before anything reads them.
    MDB_envinfo info;
    MDB_stat est;
    mdb_env_info(e.env, &info);
    mdb_env_stat(e.env, &est);
    auto needed = static_cast<off_t>((info.me_last_pgno + 1) * est.ms_psize);
    if (st.st_size < needed)
        return {Health::damaged, "truncated: " + std::to_string(st.st_size) + " of " +
                                     std::to_string(needed) + " bytes"};
    ReadTxn t;
    if ((rc = mdb_txn_begin(e.env, nullptr, MDB_RDONLY, &t.txn)) != 0)
        return {Health::damaged, lmdb_error("read", rc)};
    MDB_dbi meta, records;
    if ((rc = mdb_dbi_open(t.txn, meta_db, 0, &meta)) != 0)
        return {Health::damaged, lmdb_error("format record", rc)};
    MDB_val k = val(format_key), v;
    if ((rc = mdb_get(t.txn, meta, &k, &v)) != 0)
        return {Health::damaged, lmdb_error("format record", rc)};
    if (view(v) != format_version)
        return {Health::damaged,
                "unknown format version \"" + std::string(view(v).substr(0, 32)) + "\""};
    // Every page of the records and of the control settings is read once:
    // a damaged one fails here.
    for (const char* db : {records_db, control_db}) {
        if ((rc = mdb_dbi_open(t.txn, db, 0, &records)) != 0) {
            if (rc == MDB_NOTFOUND && db == control_db) break; // an earlier version's
            return {Health::damaged, lmdb_error(db, rc)};
        }
        MDB_cursor* c = nullptr;
        if ((rc = mdb_cursor_open(t.txn, records, &c)) != 0)
            return {Health::damaged, lmdb_error(db, rc)};
        volatile unsigned char sum = 0;
        MDB_cursor_op op = MDB_FIRST;
        while ((rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
            op = MDB_NEXT;
            for (size_t i = 0; i < v.mv_size; ++i)
                sum = sum + static_cast<const unsigned char*>(v.mv_data)[i];
        }
        mdb_cursor_close(c);
        if (rc != MDB_NOTFOUND) return {Health::damaged, lmdb_error(db, rc)};
    }
    return {Health::ok, ""};
}

namespace {

// Opens the store at `path` (which is checked or moved aside already) and
// makes its databases: with the caller's ids, under AsOwner.  nullptr with
// `error` set on failure.
template <class Env>
std::unique_ptr<Env> create_env(const std::string& path, const Store::Options& options,
                                std::string& error) {
    // A link, or a file not the owner's, where the store or its lock file
    // should be, is refused before LMDB opens them (it would follow a
    // link).  Anything planted between this check and LMDB's open is
    // opened with the owner's rights only.
    for (const std::string& p : {path, path + "-lock"}) {
        error = unusable_file(p, options.owner);
        if (!error.empty()) return nullptr;
    }
    auto env = std::make_unique<Env>();
    int rc = env->open(path, options.no_sync ? MDB_NOSYNC : 0, options.map_size, 3);
    if (rc != 0) {
        error = lmdb_error("open", rc);
        return nullptr;
    }
    struct stat st;
    if (mdb_env_get_fd(env->env, &env->fd) != 0 || ::fstat(env->fd, &st) < 0) {
        error = std::string("fstat: ") + std::strerror(errno);
        return nullptr;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != file_owner(options.owner)) {
        error = path + " changed while it was opened";
        return nullptr;
    }
    env->dev = st.st_dev;
    env->ino = st.st_ino;
    bool whole = detail::map_guarded([&] {
        MDB_stat est;
        MDB_envinfo info;
        if (mdb_env_stat(env->env, &est) == 0) env->page = est.ms_psize;
        if (mdb_env_info(env->env, &info) == 0) env->map = info.me_mapsize;
        // Readers that a killed process left registered would keep old
        // pages from being reused.
        int stale = 0;
        mdb_reader_check(env->env, &stale);
        MDB_txn* txn = nullptr;
        if ((rc = mdb_txn_begin(env->env, nullptr, 0, &txn)) != 0) return;
        MDB_dbi meta;
        MDB_val k = val(format_key), v = val(format_version);
        rc = mdb_dbi_open(txn, meta_db, MDB_CREATE, &meta);
        if (rc == 0) rc = mdb_put(txn, meta, &k, &v, 0);
        if (rc == 0) rc = mdb_dbi_open(txn, records_db, MDB_CREATE, &env->records);
        if (rc == 0) rc = mdb_dbi_open(txn, control_db, MDB_CREATE, &env->control);
        if (rc != 0) {
            mdb_txn_abort(txn);
            return;
        }
        rc = mdb_txn_commit(txn);
    });
    if (!whole) {
        error = "its file was cut while it was opened";
        env->env = nullptr; // not to be touched again
        return nullptr;
    }
    if (rc != 0) {
        error = lmdb_error("create", rc);
        return nullptr;
    }
    return env;
}

} // namespace

Store::Store(std::string path, const Options& options, std::unique_ptr<Env> env)
    : path_(std::move(path)), options_(options), env_(std::move(env)),
      max_key_(static_cast<size_t>(mdb_env_get_maxkeysize(env_->env))),
      map_size_(std::max(options.map_size, env_->map)) {}

Store::~Store() = default;

std::unique_ptr<Store> Store::open(const std::string& path, const Warn& warn,
                                   const Options& options) {
    const std::string lock = path + "-lock";
    auto refuse = [&](const std::string& why) -> std::unique_ptr<Store> {
        warn("state: cannot use " + path + ": " + why + not_kept);
        return nullptr;
    };
    if (options.owner && ::geteuid() == 0) {
        adopt(path, *options.owner, data_magic_at);
        adopt(lock, *options.owner, lock_magic_at);
    }
    {
        AsOwner as(options.owner);
        if (!as.ok())
            return refuse(std::string("cannot act as its owner: ") + std::strerror(errno));
        for (const std::string& p : {path, lock})
            if (std::string why = unusable_file(p, options.owner); !why.empty()) return refuse(why);
    }
    StoreCheck check =
        options.probe ? probe_store(path, options.map_size, options.probe_timeout, options.owner)
                      : [&] {
                            AsOwner as(options.owner);
                            return verify_store(path, options.map_size);
                        }();
    if (check.health == Health::unreachable) return refuse(check.why);
    std::unique_ptr<Env> env;
    std::string error;
    {
        AsOwner as(options.owner);
        if (!as.ok())
            return refuse(std::string("cannot act as its owner: ") + std::strerror(errno));
        if (check.health == Health::damaged && !move_aside(path, check.why, warn)) return nullptr;
        env = create_env<Env>(path, options, error);
    }
    if (!env) return refuse(error);
    return std::unique_ptr<Store>(new Store(path, options, std::move(env)));
}

template <class F> int Store::run(F&& op) {
    if (!env_) return set_aside_rc;
    int rc = 0;
    Env& e = *env_;
    bool whole = detail::map_guarded([&] {
        // A file cut shorter than the pages its header names would fault
        // on the first read of those; the guard catches the cut that comes
        // after this check.
        struct stat st;
        MDB_envinfo info;
        if (::fstat(e.fd, &st) < 0) {
            rc = errno;
            return;
        }
        mdb_env_info(e.env, &info);
        shrunk_to_ = st.st_size;
        needed_ = static_cast<off_t>((info.me_last_pgno + 1) * e.page);
        if (st.st_size < needed_) {
            rc = shrunk_rc;
            return;
        }
        rc = op();
    });
    if (!whole) rc = fault_rc;
    return rc;
}

int Store::write(const Encoded& e) {
    return run([&] {
        MDB_txn* txn = nullptr;
        int rc = mdb_txn_begin(env_->env, nullptr, 0, &txn);
        if (rc != 0) return rc;
        for (const auto& [key, value] : e.puts) {
            MDB_val k = val(key), v = val(value);
            if ((rc = mdb_put(txn, env_->records, &k, &v, 0)) != 0) break;
        }
        for (size_t i = 0; rc == 0 && e.deletes && i < e.deletes->size(); ++i) {
            const std::string& key = (*e.deletes)[i];
            if (key.empty() || key.size() > max_key_) continue;
            MDB_val k = val(key);
            rc = mdb_del(txn, env_->records, &k, nullptr);
            if (rc == MDB_NOTFOUND) rc = 0;
        }
        if (rc == 0 && e.control) {
            MDB_val k = val(control_key), v = val(*e.control);
            rc = mdb_put(txn, env_->control, &k, &v, 0);
        }
        if (rc != 0) {
            mdb_txn_abort(txn);
            return rc;
        }
        return mdb_txn_commit(txn);
    });
}

template <class F> int Store::each_record(F f) {
    return run([&] {
        ReadTxn t;
        MDB_cursor* c = nullptr;
        int rc = mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &t.txn);
        if (rc == 0) rc = mdb_cursor_open(t.txn, env_->records, &c);
        MDB_val k, v;
        MDB_cursor_op op = MDB_FIRST;
        while (rc == 0 && (rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
            op = MDB_NEXT;
            f(view(k), view(v));
        }
        if (c) mdb_cursor_close(c);
        return rc == MDB_NOTFOUND ? 0 : rc;
    });
}

int Store::grow(size_t to) {
    int rc = run([&] { return mdb_env_set_mapsize(env_->env, to); });
    if (rc == 0) map_size_ = to;
    return rc;
}

template <class Victim> size_t Store::delete_where(Victim victim) {
    size_t deleted = 0;
    std::string resume; // where the next chunk starts ("" = the first key)
    bool more = true;
    bool grown = false;
    size_t chunk = first_delete_chunk;
    while (more) {
        size_t n = 0;
        std::string next;
        int rc = run([&] {
            MDB_txn* txn = nullptr;
            MDB_cursor* c = nullptr;
            int rc = mdb_txn_begin(env_->env, nullptr, 0, &txn);
            if (rc == 0) rc = mdb_cursor_open(txn, env_->records, &c);
            MDB_val k = val(resume), v;
            MDB_cursor_op op = resume.empty() ? MDB_FIRST : MDB_SET_RANGE;
            while (rc == 0 && (rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
                op = MDB_NEXT;
                if (n == chunk) {
                    next.assign(view(k));
                    break;
                }
                auto r = decode_record(view(k), view(v));
                if (r && victim(*r)) {
                    rc = mdb_cursor_del(c, 0);
                    n++;
                }
            }
            if (rc == MDB_NOTFOUND) rc = 0;
            if (c) mdb_cursor_close(c);
            if (rc != 0) {
                if (txn) mdb_txn_abort(txn);
                return rc;
            }
            return mdb_txn_commit(txn);
        });
        if (rc == MDB_MAP_FULL && !grown) {
            // No page left even for deleting: a little room past the limit.
            grown = true;
            if (grow(map_size_ + room_step) == 0) continue;
        }
        if (rc != 0) {
            if (damage_rc(rc)) recover(rc);
            break;
        }
        deleted += n;
        more = !next.empty();
        resume = std::move(next);
        chunk = std::min(chunk * 4, max_delete_chunk);
    }
    // LMDB reuses a page freed by a transaction only from the second
    // transaction after it on: one more, that changes nothing, so that the
    // next write finds the room made.
    if (deleted > 0) {
        int rc = touch();
        if (rc == MDB_MAP_FULL && grow(map_size_ + room_step) == 0) rc = touch();
        if (damage_rc(rc)) recover(rc);
    }
    return deleted;
}

int Store::touch() {
    return run([&] {
        MDB_txn* txn = nullptr;
        MDB_dbi meta;
        int rc = mdb_txn_begin(env_->env, nullptr, 0, &txn);
        if (rc != 0) return rc;
        MDB_val k = val(format_key), v = val(format_version);
        rc = mdb_dbi_open(txn, meta_db, 0, &meta);
        if (rc == 0) rc = mdb_put(txn, meta, &k, &v, 0);
        if (rc != 0) {
            mdb_txn_abort(txn);
            return rc;
        }
        return mdb_txn_commit(txn);
    });
}

size_t Store::expire_locked(int64_t oldest, int64_t now) {
    return delete_where(
        [&](const DestinationRecord& r) { return r.updated_at < oldest && r.dead_until <= now; });
}

size_t Store::evict(int64_t now) {
    // The times of the candidates: records of destinations that are not
    // dead by when they last changed; if every one is dead, all by when
    // their death ends.
    std::vector<int64_t> alive, dead;
    int rc = each_record([&](std::string_view key, std::string_view value) {
        if (auto r = decode_record(key, value))
            (r->dead_until > now ? dead : alive)
                .push_back(r->dead_until > now ? r->dead_until : r->updated_at);
    });
    if (rc != 0) {
        if (damage_rc(rc)) recover(rc);
        return 0;
    }
    const bool all_dead = alive.empty();
    std::vector<int64_t>& pool = all_dead ? dead : alive;
    if (pool.empty()) return 0;
    // The older half goes.
    auto mid = pool.begin() + static_cast<std::ptrdiff_t>((pool.size() - 1) / 2);
    std::nth_element(pool.begin(), mid, pool.end());
    const int64_t upto = *mid;
    size_t n = delete_where([&](const DestinationRecord& r) {
        if (all_dead) return r.dead_until <= upto;
        return r.dead_until <= now && r.updated_at <= upto;
    });
    note("state: " + path_ + ": the store is full at " + mib(map_size_) + "; deleted " +
         std::to_string(n) + " records of " +
         (all_dead ? std::string("dead destinations, those whose death ends first")
                   : std::string("destinations that are not dead, the least recently changed")));
    return n;
}

size_t Store::used_percent() {
    size_t used = 0;
    int rc = run([&] {
        MDB_envinfo info;
        mdb_env_info(env_->env, &info);
        const size_t pages = info.me_mapsize / env_->page;
        const size_t high = info.me_last_pgno + 1;
        // Below the high-water mark, no need to count the free pages.
        if (pages == 0 || high * 100 < pages * high_water) {
            used = pages ? high * 100 / pages : 0;
            return 0;
        }
        // The free pages are listed in LMDB's own database 0, each entry a
        // count and page numbers (as mdb_stat -f counts them).
        ReadTxn t;
        MDB_cursor* c = nullptr;
        int rc = mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &t.txn);
        if (rc == 0) rc = mdb_cursor_open(t.txn, 0, &c);
        size_t free = 0;
        MDB_val k, v;
        MDB_cursor_op op = MDB_FIRST;
        while (rc == 0 && (rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
            op = MDB_NEXT;
            if (v.mv_size >= sizeof(size_t)) {
                size_t n;
                std::memcpy(&n, v.mv_data, sizeof n);
                free += n;
            }
        }
        if (c) mdb_cursor_close(c);
        used = (high - std::min(free, high)) * 100 / pages;
        return rc == MDB_NOTFOUND ? 0 : rc;
    });
    if (damage_rc(rc)) recover(rc);
    return used;
}

void Store::make_room(int64_t oldest, int64_t now, bool full) {
    // 1. Records nobody needs any more.
    if (oldest > 0 && expire_locked(oldest, now) > 0 && !full && used_percent() < high_water)
        return;
    // 2. A larger map.
    while (map_size_ < options_.max_map_size && (full || used_percent() >= high_water)) {
        size_t to = std::min(map_size_ * 2, options_.max_map_size);
        if (grow(to) != 0) return;
        note("state: " + path_ + ": the store is full; its map grows to " + mib(to));
        full = false;
    }
    // 3. The least useful records.
    if (full || used_percent() >= high_water) evict(now);
}

int Store::write_with_room(const Encoded& e, int64_t oldest, int64_t now) {
    // Room is made before the map is full, while deletions find pages.
    if (used_percent() >= high_water) make_room(oldest, now, false);
    int rc = write(e);
    if (rc == MDB_MAP_FULL) {
        // A batch larger than what was left.
        make_room(oldest, now, true);
        rc = write(e);
    }
    return rc;
}

void Store::close_env() {
    if (env_) env_->close();
    env_.reset();
}

bool Store::recover(int rc) {
    std::string why = rc == shrunk_rc ? "truncated: " + std::to_string(shrunk_to_) + " of " +
                                            std::to_string(needed_) + " bytes"
                      : rc == fault_rc ? "a page of it is gone (SIGBUS)"
                                       : mdb_strerror(rc);
    const dev_t dev = env_ ? env_->dev : 0;
    const ino_t ino = env_ ? env_->ino : 0;
    close_env();
    if (unusable_) return false;
    auto fail = [&](const std::string& what) {
        unusable_ = true;
        note("state: " + path_ + " is damaged (" + why + ") and " + what + not_kept +
             " until cqmgr starts again");
        return false;
    };
    std::string error;
    {
        AsOwner as(options_.owner);
        if (!as.ok()) return fail(std::string("cannot be replaced: ") + std::strerror(errno));
        // Only the damaged file itself is moved aside: in a chroot jail
        // the path may name another file, or none.
        struct stat st;
        if (::lstat(path_.c_str(), &st) == 0) {
            if (st.st_dev != dev || st.st_ino != ino)
                return fail("another file is at its path now");
            if (!move_aside(path_, why, [this](const std::string& w) { note(w); })) {
                unusable_ = true;
                return false;
            }
        } else if (errno != ENOENT) {
            return fail(std::string("cannot be replaced: ") + std::strerror(errno));
        } else {
            ::unlink((path_ + "-lock").c_str());
        }
        Options o = options_;
        o.map_size = map_size_;
        env_ = create_env<Env>(path_, o, error);
    }
    if (!env_) return fail("no empty store can take its place: " + error);
    rebuilds_++;
    if (control_doc_) {
        Encoded e;
        e.control = *control_doc_;
        if (int rc2 = write(e); rc2 != 0)
            note("state: " + path_ + ": control settings not written again: " + mdb_strerror(rc2));
    }
    return true;
}

Store::Loaded Store::load(int64_t oldest, const Warn& warn) {
    std::lock_guard lock(mu_);
    Loaded out;
    // The raw records are copied out first, and decoded outside the guard.
    std::vector<std::pair<std::string, std::string>> raw;
    int rc = each_record(
        [&](std::string_view key, std::string_view value) { raw.emplace_back(key, value); });
    if (rc != 0) {
        if (damage_rc(rc))
            recover(rc);
        else
            warn("state: " + path_ + ": " + lmdb_error("read", rc));
        for (std::string& w : std::exchange(warnings_, {}))
            warn(w);
        return out;
    }
    std::vector<std::string> drop;
    std::optional<RecordError> first_error;
    for (auto& [key, value] : raw) {
        auto r = decode_record(key, value);
        if (!r) {
            if (!first_error) first_error = r.error();
            out.bad++;
            drop.push_back(std::move(key));
        } else if (r->updated_at < oldest) {
            out.stale++;
            drop.push_back(std::move(key));
        } else {
            out.records.push_back(std::move(*r));
        }
    }
    if (out.bad > 0)
        warn("state: " + path_ + ": deleting " + std::to_string(out.bad) + " unreadable records (" +
             first_error->message() + ")");
    if (!drop.empty()) {
        Encoded e;
        e.deletes = &drop;
        if (int rc2 = write(e); rc2 != 0) {
            if (damage_rc(rc2)) recover(rc2);
            warn("state: " + path_ + ": " + lmdb_error("write", rc2));
        }
    }
    for (std::string& w : std::exchange(warnings_, {}))
        warn(w);
    return out;
}

namespace {

// The WriteError of a failed write's code.
WriteError write_error(int rc) {
    if (rc == set_aside_rc) return WriteError{WriteError::Kind::set_aside, rc};
    if (rc == MDB_MAP_FULL) return WriteError{WriteError::Kind::full, rc};
    return WriteError{WriteError::Kind::lmdb, rc};
}

} // namespace

std::string WriteError::message() const {
    switch (kind) {
    case Kind::set_aside:
        return "the store is damaged and set aside";
    case Kind::full:
        return "the store is full";
    case Kind::lmdb:
        return lmdb_error("write", code);
    }
    return lmdb_error("write", code);
}

Result<void, WriteError> Store::apply(const Batch& batch) {
    std::lock_guard lock(mu_);
    Encoded e;
    e.puts.reserve(batch.puts.size());
    for (const DestinationRecord& r : batch.puts) {
        std::string key = record_key(r.transport, r.destination);
        if (key.size() > max_key_) continue;
        e.puts.emplace_back(std::move(key), encode_record(r));
    }
    e.deletes = &batch.deletes;
    int rc = write_with_room(e, batch.oldest, batch.now);
    // Damage: once more, on the store that replaced the damaged one.
    if (damage_rc(rc) && recover(rc)) rc = write_with_room(e, batch.oldest, batch.now);
    if (rc == 0) return {};
    return Failure{write_error(rc)};
}

size_t Store::expire(int64_t oldest, int64_t now) {
    std::lock_guard lock(mu_);
    return expire_locked(oldest, now);
}

std::string ReadError::message() const {
    if (kind == Kind::set_aside) return "the store is damaged and set aside";
    return lmdb_error("read", code);
}

Result<std::optional<std::string>, ReadError> Store::get_control() {
    std::lock_guard lock(mu_);
    std::string doc;
    int rc = run([&] {
        ReadTxn t;
        int rc = mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &t.txn);
        MDB_val k = val(control_key), v;
        if (rc == 0) rc = mdb_get(t.txn, env_->control, &k, &v);
        if (rc == 0) doc.assign(view(v));
        return rc;
    });
    if (rc == 0) {
        control_doc_ = doc;
        return std::optional<std::string>(std::move(doc));
    }
    if (rc == MDB_NOTFOUND) return std::optional<std::string>();
    // Damaged: what was read before is in the store that replaced it.
    if (damage_rc(rc) && recover(rc)) return control_doc_;
    if (rc == set_aside_rc) return Failure{ReadError{ReadError::Kind::set_aside, rc}};
    return Failure{ReadError{ReadError::Kind::lmdb, rc}};
}

Result<void, WriteError> Store::put_control(std::string_view doc) {
    std::lock_guard lock(mu_);
    Encoded e;
    e.control = doc;
    int rc = write_with_room(e, 0, 0);
    if (damage_rc(rc) && recover(rc)) rc = write_with_room(e, 0, 0);
    if (rc == 0) {
        control_doc_ = std::string(doc);
        return {};
    }
    return Failure{write_error(rc)};
}

size_t Store::count() {
    std::lock_guard lock(mu_);
    size_t n = 0;
    int rc = run([&] {
        ReadTxn t;
        MDB_stat st;
        int rc = mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &t.txn);
        if (rc == 0) rc = mdb_stat(t.txn, env_->records, &st);
        if (rc == 0) n = st.ms_entries;
        return rc;
    });
    if (damage_rc(rc)) recover(rc);
    return rc == 0 ? n : 0;
}

size_t Store::map_size() {
    std::lock_guard lock(mu_);
    return map_size_;
}

uint64_t Store::rebuilds() {
    std::lock_guard lock(mu_);
    return rebuilds_;
}

bool Store::usable() {
    std::lock_guard lock(mu_);
    return !unusable_;
}

std::vector<std::string> Store::take_warnings() {
    std::lock_guard lock(mu_);
    return std::exchange(warnings_, {});
}

} // namespace cqmgr::state
