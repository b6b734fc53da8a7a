// The LMDB store: two named databases in one environment, "meta" (the key
// "format" holds the store's format version) and "destinations" (one record
// per record_key()).
#include "cqmgr/state/store.hpp"

#include "cqmgr/state/probe.hpp"

#include <cerrno>
#include <cstring>
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cqmgr::state {

namespace {

constexpr const char* meta_db = "meta";
constexpr const char* records_db = "destinations";
constexpr std::string_view format_key = "format";
constexpr std::string_view format_version = "1";

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
         ") and cannot be removed: " + std::strerror(errno) + "; destination state is not kept");
    return false;
}

// An LMDB environment handle, closed with its scope.
struct Handle {
    MDB_env* env = nullptr;
    MDB_dbi records = 0;
    ~Handle() {
        if (env) mdb_env_close(env);
    }
    // Creates the handle and opens `path` with `flags`; an LMDB or errno
    // code on failure.
    int open(const std::string& path, unsigned flags, size_t map_size) {
        int rc = mdb_env_create(&env);
        if (rc == 0) rc = mdb_env_set_maxdbs(env, 2);
        if (rc == 0) rc = mdb_env_set_mapsize(env, map_size);
        if (rc == 0) rc = mdb_env_open(env, path.c_str(), flags | MDB_NOSUBDIR | MDB_NOTLS, 0600);
        return rc;
    }
};

} // namespace

struct Store::Env : Handle {};

Health verify_store(const std::string& path, size_t map_size, std::string& why) {
    struct stat st;
    if (::stat(path.c_str(), &st) < 0) {
        if (errno == ENOENT) return Health::ok;
        why = std::string("stat: ") + std::strerror(errno);
        return Health::unreachable;
    }
    if (!S_ISREG(st.st_mode)) {
        why = "not a regular file";
        return Health::damaged;
    }
    // An environment starts with two meta pages.
    long page = ::sysconf(_SC_PAGESIZE);
    if (st.st_size < 2 * page) {
        why = "truncated to " + std::to_string(st.st_size) + " bytes";
        return Health::damaged;
    }
    Handle e;
    int rc = e.open(path, MDB_RDONLY, map_size);
    if (rc != 0) {
        why = lmdb_error("open", rc);
        return unreachable_error(rc) ? Health::unreachable : Health::damaged;
    }
    // Pages past the end of the file would fault when mapped: a truncated
    // file must be caught before anything reads them.
    MDB_envinfo info;
    MDB_stat est;
    mdb_env_info(e.env, &info);
    mdb_env_stat(e.env, &est);
    auto needed = static_cast<off_t>((info.me_last_pgno + 1) * est.ms_psize);
    if (st.st_size < needed) {
        why =
            "truncated: " + std::to_string(st.st_size) + " of " + std::to_string(needed) + " bytes";
        return Health::damaged;
    }
    ReadTxn t;
    if ((rc = mdb_txn_begin(e.env, nullptr, MDB_RDONLY, &t.txn)) != 0) {
        why = lmdb_error("read", rc);
        return Health::damaged;
    }
    MDB_dbi meta, records;
    if ((rc = mdb_dbi_open(t.txn, meta_db, 0, &meta)) != 0) {
        why = lmdb_error("format record", rc);
        return Health::damaged;
    }
    MDB_val k = val(format_key), v;
    if ((rc = mdb_get(t.txn, meta, &k, &v)) != 0) {
        why = lmdb_error("format record", rc);
        return Health::damaged;
    }
    if (view(v) != format_version) {
        why = "unknown format version \"" + std::string(view(v).substr(0, 32)) + "\"";
        return Health::damaged;
    }
    if ((rc = mdb_dbi_open(t.txn, records_db, 0, &records)) != 0) {
        why = lmdb_error("records", rc);
        return Health::damaged;
    }
    // Every page of the records is read once: a damaged one fails here.
    MDB_cursor* c = nullptr;
    if ((rc = mdb_cursor_open(t.txn, records, &c)) != 0) {
        why = lmdb_error("records", rc);
        return Health::damaged;
    }
    volatile unsigned char sum = 0;
    MDB_cursor_op op = MDB_FIRST;
    while ((rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
        op = MDB_NEXT;
        for (size_t i = 0; i < v.mv_size; ++i)
            sum = sum + static_cast<const unsigned char*>(v.mv_data)[i];
    }
    mdb_cursor_close(c);
    if (rc != MDB_NOTFOUND) {
        why = lmdb_error("records", rc);
        return Health::damaged;
    }
    return Health::ok;
}

Store::Store(std::string path, std::unique_ptr<Env> env)
    : path_(std::move(path)), env_(std::move(env)) {}

Store::~Store() = default;

std::unique_ptr<Store> Store::open(const std::string& path, const Warn& warn,
                                   const Options& options) {
    std::string why;
    Health h = options.probe ? probe_store(path, options.map_size, options.probe_timeout, why)
                             : verify_store(path, options.map_size, why);
    if (h == Health::unreachable) {
        warn("state: cannot use " + path + ": " + why + "; destination state is not kept");
        return nullptr;
    }
    if (h == Health::damaged && !move_aside(path, why, warn)) return nullptr;

    auto env = std::make_unique<Env>();
    auto fail = [&](const char* what, int rc) -> std::unique_ptr<Store> {
        warn("state: cannot use " + path + ": " + lmdb_error(what, rc) +
             "; destination state is not kept");
        return nullptr;
    };
    int rc = env->open(path, options.no_sync ? MDB_NOSYNC : 0, options.map_size);
    if (rc != 0) return fail("open", rc);
    // Readers that a killed process left registered would keep old pages
    // from being reused.
    int stale = 0;
    mdb_reader_check(env->env, &stale);
    MDB_txn* txn = nullptr;
    if ((rc = mdb_txn_begin(env->env, nullptr, 0, &txn)) != 0) return fail("begin", rc);
    MDB_dbi meta;
    MDB_val k = val(format_key), v = val(format_version);
    rc = mdb_dbi_open(txn, meta_db, MDB_CREATE, &meta);
    if (rc == 0) rc = mdb_put(txn, meta, &k, &v, 0);
    if (rc == 0) rc = mdb_dbi_open(txn, records_db, MDB_CREATE, &env->records);
    if (rc != 0) {
        mdb_txn_abort(txn);
        return fail("create", rc);
    }
    if ((rc = mdb_txn_commit(txn)) != 0) return fail("create", rc);
    return std::unique_ptr<Store>(new Store(path, std::move(env)));
}

Store::Loaded Store::load(int64_t oldest, const Warn& warn) {
    Loaded out;
    Batch drop;
    std::string first_error;
    {
        ReadTxn t;
        MDB_cursor* c = nullptr;
        int rc = mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &t.txn);
        if (rc == 0) rc = mdb_cursor_open(t.txn, env_->records, &c);
        MDB_val k, v;
        MDB_cursor_op op = MDB_FIRST;
        while (rc == 0 && (rc = mdb_cursor_get(c, &k, &v, op)) == 0) {
            op = MDB_NEXT;
            std::string error;
            auto r = decode_record(view(k), view(v), error);
            if (!r) {
                if (first_error.empty()) first_error = error;
                out.bad++;
                drop.deletes.emplace_back(view(k));
            } else if (r->updated_at < oldest) {
                out.stale++;
                drop.deletes.emplace_back(view(k));
            } else {
                out.records.push_back(std::move(*r));
            }
        }
        if (c) mdb_cursor_close(c);
        if (rc != MDB_NOTFOUND) warn("state: " + path_ + ": " + lmdb_error("read", rc));
    }
    if (out.bad > 0)
        warn("state: " + path_ + ": deleting " + std::to_string(out.bad) + " unreadable records (" +
             first_error + ")");
    std::string error;
    if (!drop.deletes.empty() && !apply(drop, error)) warn("state: " + path_ + ": " + error);
    return out;
}

bool Store::apply(const Batch& batch, std::string& error) {
    MDB_txn* txn = nullptr;
    int rc = mdb_txn_begin(env_->env, nullptr, 0, &txn);
    if (rc != 0) {
        error = lmdb_error("begin", rc);
        return false;
    }
    const size_t max_key = max_key_size();
    for (const DestinationRecord& r : batch.puts) {
        std::string key = record_key(r.transport, r.destination);
        if (key.size() > max_key) continue;
        std::string value = encode_record(r);
        MDB_val k = val(key), v = val(value);
        if ((rc = mdb_put(txn, env_->records, &k, &v, 0)) != 0) break;
    }
    for (size_t i = 0; rc == 0 && i < batch.deletes.size(); ++i) {
        const std::string& key = batch.deletes[i];
        if (key.empty() || key.size() > max_key) continue;
        MDB_val k = val(key);
        rc = mdb_del(txn, env_->records, &k, nullptr);
        if (rc == MDB_NOTFOUND) rc = 0;
    }
    if (rc != 0) {
        mdb_txn_abort(txn);
        error = lmdb_error("write", rc);
        return false;
    }
    if ((rc = mdb_txn_commit(txn)) != 0) {
        error = lmdb_error("commit", rc);
        return false;
    }
    return true;
}

size_t Store::count() {
    ReadTxn t;
    MDB_stat st;
    if (mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &t.txn) != 0 ||
        mdb_stat(t.txn, env_->records, &st) != 0)
        return 0;
    return st.ms_entries;
}

size_t Store::max_key_size() const {
    return static_cast<size_t>(mdb_env_get_maxkeysize(env_->env));
}

} // namespace cqmgr::state
