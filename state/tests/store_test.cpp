#include "cqmgr/state/probe.hpp"
#include "cqmgr/state/store.hpp"
#include "cqmgr/test/temp_dir.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

// LeakSanitizer (the ASan build): an LMDB environment cut short by a SIGBUS
// is abandoned, its memory lost on purpose (map_guard.hpp).
extern "C" const char* __lsan_default_suppressions() {
    return "leak:mdb_env_create\nleak:mdb_env_open\nleak:mdb_txn_begin\nleak:mdb_dbi_open\n";
}

namespace cqmgr::state {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
  protected:
    // What apply() said went wrong ("" when it wrote the batch).
    static std::string apply_error(Store& s, const Store::Batch& b) {
        auto w = s.apply(b);
        return w ? "" : w.error().message();
    }

    std::unique_ptr<Store> open(Store::Options o = {}) {
        o.probe_timeout = std::chrono::seconds(20);
        return Store::open(
            path_, [this](const std::string& w) { warnings_.push_back(w); }, o);
    }

    static DestinationRecord record(int i, int64_t updated = 1000) {
        DestinationRecord r;
        r.transport = "smtp";
        r.destination = "dest" + std::to_string(i) + ".example";
        r.nexthop = r.destination;
        r.window = i % 20 + 1;
        r.updated_at = updated;
        if (i % 3 == 0) {
            r.dead_until = 5000 + i;
            r.dead_status = "4.4.1";
            r.dead_reason = "delivery temporarily suspended: connect to " + r.destination +
                            ": Connection refused";
        }
        return r;
    }

    // Fills a store with `n` records and closes it.
    void fill(int n) {
        auto s = open();
        ASSERT_TRUE(s);
        Store::Batch b;
        for (int i = 0; i < n; ++i)
            b.puts.push_back(record(i));
        ASSERT_EQ(apply_error(*s, b), "");
    }

    // Writes `n` records into the open store `s`.
    void fill_open(Store& s, int n) {
        Store::Batch b;
        for (int i = 0; i < n; ++i)
            b.puts.push_back(record(i));
        ASSERT_EQ(apply_error(s, b), "");
    }

    // Writes `value` under `key` into the named database `db` of the
    // store, with LMDB itself.
    void put_raw(const char* db, std::string key, std::string value) {
        MDB_env* env;
        ASSERT_EQ(mdb_env_create(&env), 0);
        mdb_env_set_maxdbs(env, 2);
        ASSERT_EQ(mdb_env_open(env, path_.c_str(), MDB_NOSUBDIR, 0600), 0);
        MDB_txn* txn;
        MDB_dbi dbi;
        ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
        ASSERT_EQ(mdb_dbi_open(txn, db, 0, &dbi), 0);
        MDB_val k{key.size(), key.data()}, v{value.size(), value.data()};
        ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
        ASSERT_EQ(mdb_txn_commit(txn), 0);
        mdb_env_close(env);
    }

    // Overwrites `len` bytes of the data file at `offset` with `byte`.
    void scribble(off_t offset, size_t len, char byte) {
        int fd = ::open(path_.c_str(), O_WRONLY);
        ASSERT_GE(fd, 0);
        std::string junk(len, byte);
        ASSERT_EQ(::pwrite(fd, junk.data(), len, offset), static_cast<ssize_t>(len));
        ::close(fd);
    }

    // Overwrites every page after the two header pages with `byte`.
    void scribble_records(char byte) {
        long page = ::sysconf(_SC_PAGESIZE);
        auto size = static_cast<off_t>(fs::file_size(path_));
        scribble(2 * page, static_cast<size_t>(size - 2 * page), byte);
    }

    // A damaged store was reported, moved aside and replaced by an empty one.
    void expect_rebuilt(Store* s) {
        ASSERT_NE(s, nullptr);
        ASSERT_EQ(warnings_.size(), 1u);
        EXPECT_NE(warnings_[0].find("is damaged"), std::string::npos) << warnings_[0];
        EXPECT_NE(warnings_[0].find("starting with an empty store"), std::string::npos);
        EXPECT_TRUE(fs::exists(path_ + ".corrupt"));
        EXPECT_EQ(s->count(), 0u);
        // And it works.
        Store::Batch b;
        b.puts.push_back(record(1));
        EXPECT_EQ(apply_error(*s, b), "");
        EXPECT_EQ(s->load(0, [](const std::string&) {}).records.size(), 1u);
    }

    cqmgr::test::TempDir tmp_{"cqmgr-state-test"};
    std::string dir_ = tmp_.str();
    std::string path_ = dir_ + "/cqmgr-state.lmdb";
    std::vector<std::string> warnings_;
};

TEST_F(StoreTest, CreatesAnEmptyStore) {
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_TRUE(warnings_.empty());
    EXPECT_TRUE(fs::exists(path_));
    EXPECT_EQ(fs::status(path_).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(s->count(), 0u);
    EXPECT_TRUE(s->load(0, [](const std::string&) {}).records.empty());
}

TEST_F(StoreTest, KeepsRecordsAcrossReopening) {
    fill(100);
    auto s = open();
    ASSERT_TRUE(s);
    EXPECT_TRUE(warnings_.empty());
    auto loaded = s->load(0, [](const std::string&) {});
    ASSERT_EQ(loaded.records.size(), 100u);
    std::map<std::string, DestinationRecord> by_dest;
    for (auto& r : loaded.records)
        by_dest[r.destination] = r;
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(by_dest[record(i).destination], record(i));
}

TEST_F(StoreTest, PutReplacesAndDeleteRemoves) {
    auto s = open();
    ASSERT_TRUE(s);
    Store::Batch b;
    b.puts = {record(1), record(2)};
    ASSERT_EQ(apply_error(*s, b), "");
    DestinationRecord changed = record(1);
    changed.window = 42;
    b = {};
    b.puts = {changed};
    b.deletes = {record_key("smtp", record(2).destination), record_key("smtp", "never-there")};
    ASSERT_EQ(apply_error(*s, b), "");
    auto loaded = s->load(0, [](const std::string&) {});
    ASSERT_EQ(loaded.records.size(), 1u);
    EXPECT_EQ(loaded.records[0], changed);
}

TEST_F(StoreTest, LoadDropsStaleRecords) {
    auto s = open();
    ASSERT_TRUE(s);
    Store::Batch b;
    b.puts = {record(1, 100), record(2, 200), record(3, 300)};
    ASSERT_EQ(apply_error(*s, b), "");
    auto loaded = s->load(200, [](const std::string&) {});
    EXPECT_EQ(loaded.records.size(), 2u);
    EXPECT_EQ(loaded.stale, 1u);
    EXPECT_EQ(s->count(), 2u);
}

TEST_F(StoreTest, UnreadableRecordsAreDeletedWithAWarning) {
    fill(3);
    // A value of a future record version next to the good ones.
    put_raw("destinations", record_key("smtp", "future.example"), "\x09whatever");
    auto s = open();
    ASSERT_TRUE(s);
    std::vector<std::string> load_warnings;
    auto loaded = s->load(0, [&](const std::string& w) { load_warnings.push_back(w); });
    EXPECT_EQ(loaded.records.size(), 3u);
    EXPECT_EQ(loaded.bad, 1u);
    ASSERT_EQ(load_warnings.size(), 1u);
    EXPECT_NE(load_warnings[0].find("unknown record version 9"), std::string::npos);
    EXPECT_EQ(s->count(), 3u);
}

TEST_F(StoreTest, TooLongKeysAreLeftOut) {
    auto s = open();
    ASSERT_TRUE(s);
    DestinationRecord r = record(1);
    r.destination = std::string(s->max_key_size(), 'x');
    Store::Batch b;
    b.puts = {r, record(2)};
    ASSERT_EQ(apply_error(*s, b), "");
    EXPECT_EQ(s->count(), 1u);
}

TEST_F(StoreTest, TruncatedStoreIsRebuilt) {
    fill(2000);
    ASSERT_GT(fs::file_size(path_), 3 * 4096u);
    fs::resize_file(path_, 2 * ::sysconf(_SC_PAGESIZE));
    auto s = open();
    expect_rebuilt(s.get());
    EXPECT_NE(warnings_[0].find("truncated"), std::string::npos) << warnings_[0];
}

TEST_F(StoreTest, StoreCutToAFewBytesIsRebuilt) {
    fill(10);
    fs::resize_file(path_, 100);
    auto s = open();
    expect_rebuilt(s.get());
}

TEST_F(StoreTest, EmptyFileIsRebuilt) {
    { std::ofstream(path_.c_str()); }
    auto s = open();
    expect_rebuilt(s.get());
}

TEST_F(StoreTest, GarbageHeaderIsRebuilt) {
    fill(10);
    scribble(0, 2 * ::sysconf(_SC_PAGESIZE), '\x5a');
    auto s = open();
    expect_rebuilt(s.get());
}

TEST_F(StoreTest, GarbageRecordPagesAreRebuilt) {
    fill(2000);
    scribble_records('\xff');
    auto s = open();
    expect_rebuilt(s.get());
}

TEST_F(StoreTest, GarbageRecordPagesAreRebuiltWithoutTheProbe) {
    // Zeroed pages are caught by LMDB's own checks, in process too.
    fill(2000);
    scribble_records('\0');
    Store::Options o;
    o.probe = false;
    auto s = open(o);
    expect_rebuilt(s.get());
}

TEST_F(StoreTest, UnknownFormatVersionIsRebuilt) {
    fill(1);
    put_raw("meta", "format", "99");
    auto s = open();
    expect_rebuilt(s.get());
    EXPECT_NE(warnings_[0].find("unknown format version \"99\""), std::string::npos)
        << warnings_[0];
}

TEST_F(StoreTest, NotAFileIsLeftAlone) {
    fs::create_directory(path_);
    auto s = open();
    EXPECT_FALSE(s);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0], "state: cannot use " + path_ + ": " + path_ +
                                " is not a regular file; destination state and control "
                                "settings are not kept");
    EXPECT_TRUE(fs::is_directory(path_));
}

TEST_F(StoreTest, MissingDirectoryMeansNoStore) {
    path_ = dir_ + "/no-such-directory/cqmgr-state.lmdb";
    auto s = open();
    EXPECT_FALSE(s);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("destination state and control settings are not kept"),
              std::string::npos);
}

TEST_F(StoreTest, ALinkWhereTheLockFileShouldBeIsRefusedAndItsTargetLeftAlone) {
    fill(3);
    std::string victim = dir_ + "/victim";
    std::ofstream(victim) << "not yours\n";
    fs::remove(path_ + "-lock");
    fs::create_symlink(victim, path_ + "-lock");
    auto s = open();
    EXPECT_FALSE(s);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_EQ(warnings_[0], "state: cannot use " + path_ + ": " + path_ +
                                "-lock is a symbolic link; destination state and control "
                                "settings are not kept");
    EXPECT_EQ(fs::file_size(victim), 10u);
}

TEST_F(StoreTest, ALinkWhereTheStoreShouldBeIsRefusedAndNothingIsCreated) {
    std::string target = dir_ + "/elsewhere";
    fs::create_symlink(target, path_);
    auto s = open();
    EXPECT_FALSE(s);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find(path_ + " is a symbolic link"), std::string::npos) << warnings_[0];
    EXPECT_FALSE(fs::exists(target));
    EXPECT_FALSE(fs::exists(target + "-lock"));
    // A hard link to someone else's file, likewise.
    fs::remove(path_);
    std::ofstream(target) << "x";
    fs::create_hard_link(target, path_);
    EXPECT_FALSE(open());
    EXPECT_NE(warnings_.back().find("has 2 hard links"), std::string::npos) << warnings_.back();
}

// As root, with mail_owner played by nobody in a directory of nobody's.
class OwnedStoreTest : public StoreTest {
  protected:
    void SetUp() override {
        if (::geteuid() != 0) GTEST_SKIP() << "needs root";
        StoreTest::SetUp();
        ASSERT_EQ(::chown(dir_.c_str(), owner_.uid, owner_.gid), 0);
        ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
    }
    std::unique_ptr<Store> open_owned() {
        Store::Options o;
        o.owner = owner_;
        return open(o);
    }
    static uid_t uid_of(const std::string& p) {
        struct stat st;
        return ::lstat(p.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
    }
    const Owner owner_{65534, 65534};
};

TEST_F(OwnedStoreTest, FilesAreMadeAsTheOwner) {
    auto s = open_owned();
    ASSERT_TRUE(s);
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(uid_of(path_), owner_.uid);
    EXPECT_EQ(uid_of(path_ + "-lock"), owner_.uid);
    // The process is root again.
    EXPECT_EQ(::geteuid(), 0u);
    EXPECT_EQ(::getegid(), 0u);
}

TEST_F(OwnedStoreTest, AStoreAnEarlierVersionMadeAsRootIsTakenOver) {
    fill(5); // as root, as earlier versions did
    ASSERT_EQ(uid_of(path_), 0u);
    auto s = open_owned();
    ASSERT_TRUE(s);
    EXPECT_TRUE(warnings_.empty()) << warnings_[0];
    EXPECT_EQ(uid_of(path_), owner_.uid);
    EXPECT_EQ(uid_of(path_ + "-lock"), owner_.uid);
    EXPECT_EQ(s->count(), 5u);
}

TEST_F(OwnedStoreTest, OtherRootFilesAreNotTakenOver) {
    // Root's, but not an LMDB file: whoever holds the directory may have
    // moved it there.
    std::ofstream(path_) << std::string(16384, 'x');
    ::chmod(path_.c_str(), 0600);
    EXPECT_FALSE(open_owned());
    EXPECT_EQ(uid_of(path_), 0u);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("belongs to uid 0"), std::string::npos) << warnings_[0];
}

TEST_F(OwnedStoreTest, TheProbeReadsTheStoreAsTheOwner) {
    {
        auto s = open_owned();
        ASSERT_TRUE(s);
        fill_open(*s, 5);
    }
    // The probe opens the lock file by name; a link there leads it
    // nowhere the owner could not write.
    std::string victim = dir_ + "-victim";
    std::ofstream(victim) << "root only\n";
    ::chmod(victim.c_str(), 0644);
    fs::remove(path_ + "-lock");
    {
        AsOwner as(owner_);
        ASSERT_TRUE(as.ok());
        fs::create_symlink(victim, path_ + "-lock");
    }
    auto check = probe_store(path_, size_t{1} << 24, std::chrono::seconds(20), owner_);
    EXPECT_EQ(check.health, Health::unreachable) << check.why;
    EXPECT_EQ(fs::file_size(victim), 10u);
    fs::remove(victim);
}

TEST_F(OwnedStoreTest, ALinkToARootFileIsNeverWrittenThrough) {
    // Planted by the owner between the check and LMDB's open, the link is
    // still opened as the owner: not writable.
    std::string victim = dir_ + "-victim";
    std::ofstream(victim) << "root only\n";
    ::chmod(victim.c_str(), 0644);
    {
        AsOwner as(owner_);
        ASSERT_TRUE(as.ok());
        fs::create_symlink(victim, path_ + "-lock");
        int fd = ::open((path_ + "-lock").c_str(), O_RDWR);
        EXPECT_LT(fd, 0) << "opened through the link";
        if (fd >= 0) ::close(fd);
    }
    EXPECT_FALSE(open_owned());
    EXPECT_EQ(fs::file_size(victim), 10u);
    fs::remove(victim);
}

TEST_F(StoreTest, AStoreCutWhileOpenIsSetAsideAndReplaced) {
    auto s = open();
    ASSERT_TRUE(s);
    Store::Batch b;
    for (int i = 0; i < 2000; ++i)
        b.puts.push_back(record(i));
    ASSERT_EQ(apply_error(*s, b), "");
    auto put = s->put_control("{\"kept\":1}");
    ASSERT_TRUE(put) << put.error().message();
    // Cut under the open store: the next use would read pages past the end.
    fs::resize_file(path_, 2 * ::sysconf(_SC_PAGESIZE));
    b.puts = {record(1), record(2)};
    ASSERT_EQ(apply_error(*s, b), "");
    EXPECT_EQ(s->rebuilds(), 1u);
    EXPECT_TRUE(s->usable());
    auto w = s->take_warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("is damaged (truncated: 8192 of"), std::string::npos) << w[0];
    EXPECT_NE(w[0].find("moved to " + path_ + ".corrupt, starting with an empty store"),
              std::string::npos)
        << w[0];
    EXPECT_TRUE(fs::exists(path_ + ".corrupt"));
    // The new store holds the batch and the control settings.
    EXPECT_EQ(s->count(), 2u);
    auto doc = s->get_control();
    ASSERT_TRUE(doc) << doc.error().message();
    EXPECT_EQ(*doc, std::optional<std::string>("{\"kept\":1}"));
    s.reset();
    warnings_.clear();
    s = open();
    ASSERT_TRUE(s);
    EXPECT_TRUE(warnings_.empty());
    EXPECT_EQ(s->count(), 2u);
}

TEST_F(StoreTest, ALockFileCutWhileOpenIsCaughtNotACrash) {
    // The lock file's map has no size check: touching it after the cut
    // raises SIGBUS, which the guard turns into damage.
    auto s = open();
    ASSERT_TRUE(s);
    fill_open(*s, 10);
    fs::resize_file(path_ + "-lock", 0);
    Store::Batch b;
    b.puts = {record(1)};
    EXPECT_EQ(apply_error(*s, b), "");
    EXPECT_EQ(s->rebuilds(), 1u);
    auto w = s->take_warnings();
    ASSERT_FALSE(w.empty());
    EXPECT_NE(w[0].find("SIGBUS"), std::string::npos) << w[0];
    EXPECT_EQ(s->count(), 1u);
}

TEST_F(StoreTest, AStoreThatCannotBeReplacedStopsKeeping) {
    auto s = open();
    ASSERT_TRUE(s);
    fill_open(*s, 2000);
    // As in a chroot jail: the path leads elsewhere now.
    fs::rename(dir_, dir_ + ".moved");
    fs::resize_file(dir_ + ".moved/cqmgr-state.lmdb", 2 * ::sysconf(_SC_PAGESIZE));
    Store::Batch b;
    b.puts = {record(1)};
    EXPECT_FALSE(s->apply(b));
    EXPECT_FALSE(s->usable());
    auto w = s->take_warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("destination state and control settings are not kept until cqmgr "
                        "starts again"),
              std::string::npos)
        << w[0];
    EXPECT_FALSE(s->apply(b));
    EXPECT_EQ(s->count(), 0u);
    fs::rename(dir_ + ".moved", dir_);
}

TEST_F(StoreTest, ExpiryDeletesStaleRecordsButNotThoseOfDeadDestinations) {
    auto s = open();
    ASSERT_TRUE(s);
    Store::Batch b;
    // record(i) is dead until 5000 + i when i % 3 == 0.
    for (int i = 0; i < 30; ++i)
        b.puts.push_back(record(i, i < 20 ? 100 : 900));
    ASSERT_EQ(apply_error(*s, b), "");
    // 20 stale, 7 of them dead (0, 3, ..., 18) until after `now`.
    EXPECT_EQ(s->expire(500, 4000), 13u);
    EXPECT_EQ(s->count(), 17u);
    // Once their death is over, they go too.
    EXPECT_EQ(s->expire(500, 6000), 7u);
    EXPECT_EQ(s->count(), 10u);
}

TEST_F(StoreTest, AFullMapLosesStaleRecordsFirst) {
    Store::Options o;
    o.map_size = o.max_map_size = size_t{1} << 20;
    auto s = open(o);
    ASSERT_TRUE(s);
    // Batches of big records until the map is full, each written at a
    // later time; records older than 5 batches are stale.
    for (int batch = 0; batch < 60; ++batch) {
        Store::Batch b;
        b.now = 1000 + batch;
        b.oldest = b.now - 5;
        for (int i = 0; i < 20; ++i) {
            DestinationRecord r = record(batch * 20 + i, b.now);
            r.dead_until = 0;
            r.dead_status.clear();
            r.dead_reason.clear();
            r.last_dsn_text = std::string(1000, 't');
            b.puts.push_back(r);
        }
        ASSERT_EQ(apply_error(*s, b), "") << "batch " << batch;
    }
    EXPECT_EQ(s->map_size(), size_t{1} << 20);
    EXPECT_LT(s->count(), 1200u);
    auto notes = s->take_warnings();
    EXPECT_TRUE(notes.empty()) << notes[0]; // expiry is no news
    // The records of the last batches, not stale, are all there.
    auto loaded = s->load(0, [](const std::string&) {});
    size_t recent = 0;
    for (const DestinationRecord& r : loaded.records)
        recent += r.updated_at >= 1000 + 59 - 5;
    EXPECT_EQ(recent, 6u * 20);
}

TEST_F(StoreTest, AFullMapGrowsThenGivesUpLiveRecordsButKeepsDeadOnes) {
    Store::Options o;
    o.map_size = size_t{1} << 20;
    o.max_map_size = size_t{2} << 20;
    auto s = open(o);
    ASSERT_TRUE(s);
    // Nothing is stale (no `oldest`); every fifth destination is dead.
    int written = 0;
    for (int batch = 0; batch < 60; ++batch) {
        Store::Batch b;
        b.now = 1000;
        for (int i = 0; i < 20; ++i, ++written) {
            DestinationRecord r = record(written, 1000 + batch);
            r.dead_until = written % 5 == 0 ? 9000 : 0;
            r.dead_status = written % 5 == 0 ? "4.4.1" : "";
            r.dead_reason = written % 5 == 0 ? "connection refused" : "";
            r.last_dsn_text = std::string(2000, 't');
            b.puts.push_back(r);
        }
        if (auto w = s->apply(b); !w) {
            for (auto& n : s->take_warnings())
                ADD_FAILURE() << n;
            FAIL() << "batch " << batch << ": " << w.error().message() << " map " << s->map_size();
        }
    }
    EXPECT_GE(s->map_size(), size_t{2} << 20);
    auto w = s->take_warnings();
    ASSERT_GE(w.size(), 2u);
    EXPECT_EQ(w[0], "state: " + path_ + ": the store is full; its map grows to 2 MiB");
    EXPECT_NE(w[1].find("the store is full at 2 MiB; deleted "), std::string::npos) << w[1];
    EXPECT_NE(w[1].find("records of destinations that are not dead, the least recently changed"),
              std::string::npos)
        << w[1];
    auto loaded = s->load(0, [](const std::string&) {});
    EXPECT_LT(loaded.records.size(), static_cast<size_t>(written));
    size_t dead = 0;
    for (const DestinationRecord& r : loaded.records)
        dead += r.dead_until > 0;
    EXPECT_EQ(dead, static_cast<size_t>(written / 5));
}

TEST_F(StoreTest, ProbeSaysOkForAGoodStoreAndForNone) {
    auto check = probe_store(path_, size_t{1} << 24, std::chrono::seconds(20));
    EXPECT_EQ(check.health, Health::ok) << check.why;
    EXPECT_EQ(check.why, "");
    fill(5);
    check = probe_store(path_, size_t{1} << 24, std::chrono::seconds(20));
    EXPECT_EQ(check.health, Health::ok) << check.why;
}

} // namespace
} // namespace cqmgr::state
