#include "cqmgr/state/probe.hpp"
#include "cqmgr/state/store.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace cqmgr::state {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/cqmgr-state-test-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        path_ = dir_ + "/cqmgr-state.lmdb";
    }
    void TearDown() override { fs::remove_all(dir_); }

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
        std::string error;
        ASSERT_TRUE(s->apply(b, error)) << error;
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
        std::string error;
        EXPECT_TRUE(s->apply(b, error)) << error;
        EXPECT_EQ(s->load(0, [](const std::string&) {}).records.size(), 1u);
    }

    std::string dir_, path_;
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
    std::string error;
    ASSERT_TRUE(s->apply(b, error));
    DestinationRecord changed = record(1);
    changed.window = 42;
    b = {};
    b.puts = {changed};
    b.deletes = {record_key("smtp", record(2).destination), record_key("smtp", "never-there")};
    ASSERT_TRUE(s->apply(b, error)) << error;
    auto loaded = s->load(0, [](const std::string&) {});
    ASSERT_EQ(loaded.records.size(), 1u);
    EXPECT_EQ(loaded.records[0], changed);
}

TEST_F(StoreTest, LoadDropsStaleRecords) {
    auto s = open();
    ASSERT_TRUE(s);
    Store::Batch b;
    b.puts = {record(1, 100), record(2, 200), record(3, 300)};
    std::string error;
    ASSERT_TRUE(s->apply(b, error));
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
    std::string error;
    ASSERT_TRUE(s->apply(b, error)) << error;
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

TEST_F(StoreTest, NotAFileIsRebuilt) {
    fs::create_directory(path_);
    auto s = open();
    expect_rebuilt(s.get());
}

TEST_F(StoreTest, MissingDirectoryMeansNoStore) {
    path_ = dir_ + "/no-such-directory/cqmgr-state.lmdb";
    auto s = open();
    EXPECT_FALSE(s);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("destination state is not kept"), std::string::npos);
}

TEST_F(StoreTest, ProbeSaysOkForAGoodStoreAndForNone) {
    std::string why;
    EXPECT_EQ(probe_store(path_, size_t{1} << 24, std::chrono::seconds(20), why), Health::ok);
    fill(5);
    EXPECT_EQ(probe_store(path_, size_t{1} << 24, std::chrono::seconds(20), why), Health::ok)
        << why;
}

} // namespace
} // namespace cqmgr::state
