#include "cqmgr/test/temp_dir.hpp"
#include "table_watch.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/time.h>
#include <unistd.h>

using namespace cqmgr::qmgr;

namespace {
// A scratch table file NAME.db; removed at the end.
struct ScratchTable {
    cqmgr::test::TempDir dir{"table_watch_test"};
    std::string base = dir.file("t");
    ScratchTable() { dir.write("t.db", "x"); }
    // Moves the file's mtime `seconds` into the past.
    void age(int seconds) const {
        timeval tv[2];
        ::gettimeofday(&tv[0], nullptr);
        tv[0].tv_sec -= seconds;
        tv[1] = tv[0];
        ::utimes((base + ".db").c_str(), tv);
    }
};
} // namespace

TEST(TableWatch, ReportsAModifiedFileByStockName) {
    ScratchTable t;
    TableWatch w({"hash:" + t.base, "inline:{ a=b }", "regexp:/nonexistent"});
    EXPECT_EQ(w.changed(), std::nullopt);
    t.age(10);
    EXPECT_EQ(w.changed(), "hash:" + t.base + "(0,lock|utf8_request)");
}

TEST(TableWatch, ReportsARemovedFile) {
    ScratchTable t;
    TableWatch w({"btree:" + t.base});
    std::remove((t.base + ".db").c_str());
    EXPECT_EQ(w.changed(), "btree:" + t.base + "(0,lock|utf8_request)");
}

TEST(TableWatch, LmdbCountsOnlyRemoval) {
    ScratchTable t;
    std::ofstream(t.base + ".lmdb") << "x";
    TableWatch w({"lmdb:" + t.base});
    timeval tv[2] = {{1, 0}, {1, 0}};
    ::utimes((t.base + ".lmdb").c_str(), tv);
    EXPECT_EQ(w.changed(), std::nullopt);
    std::remove((t.base + ".lmdb").c_str());
    EXPECT_EQ(w.changed(), "lmdb:" + t.base + "(0,lock|utf8_request)");
}

TEST(TableWatch, MissingFilesAreNotWatched) {
    TableWatch w({"hash:/nonexistent/table"});
    EXPECT_EQ(w.changed(), std::nullopt);
}
