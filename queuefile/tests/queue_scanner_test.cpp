#include "cqmgr/queuefile/queue_layout.hpp"
#include "cqmgr/queuefile/queue_scanner.hpp"
#include "cqmgr/test/temp_dir.hpp"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace cqmgr::queuefile;
namespace fs = std::filesystem;

namespace {

// A scratch queue tree, removed at the end.
struct TempTree : cqmgr::test::TempDir {
    TempTree() : TempDir("qscan") {}
    // Makes the file `rel` (and the directories above it) with one byte.
    void touch(const std::string& rel) {
        fs::create_directories((path() / rel).parent_path());
        std::ofstream(path() / rel) << "x";
    }
};

// Every name the scanner yields for `dir`.
std::multiset<std::string> drain(QueueScanner& s, const std::string& dir,
                                 DirStamps* stamps = nullptr,
                                 QueueScanner::Listing listing = QueueScanner::Listing::every) {
    s.start(dir, stamps, listing);
    std::multiset<std::string> out;
    while (auto id = s.next())
        out.insert(*id);
    return out;
}

} // namespace

TEST(QueueScanner, DescendsIntoHashDirectoriesAndSkipsBadNames) {
    TempTree t;
    t.touch("deferred/A/ABCDEF123");
    t.touch("deferred/A/AB99");
    t.touch("deferred/1/1F00D");
    t.touch("deferred/1/E/1E77");  // two levels deep
    t.touch("deferred/not.an.id"); // fails queue_id_ok
    t.touch("deferred/TOPLEVEL42");
    QueueScanner s;
    auto got = drain(s, (t.path() / "deferred").string());
    EXPECT_EQ(got,
              (std::multiset<std::string>{"ABCDEF123", "AB99", "1F00D", "1E77", "TOPLEVEL42"}));
    // scan_queue lists the same names.
    auto list = scan_queue((t.path() / "deferred").string());
    EXPECT_EQ(std::multiset<std::string>(list.begin(), list.end()), got);
}

TEST(QueueScanner, MissingDirectoryIsAnEmptyPass) {
    QueueScanner s;
    s.start("/nonexistent/queue/dir");
    EXPECT_FALSE(s.next().has_value());
    EXPECT_FALSE(s.next().has_value());
}

TEST(QueueScanner, RestartBeginsANewPass) {
    TempTree t;
    t.touch("incoming/AAA111");
    t.touch("incoming/BBB222");
    QueueScanner s;
    s.start((t.path() / "incoming").string());
    ASSERT_TRUE(s.next().has_value()); // half-way, then start again
    auto again = drain(s, (t.path() / "incoming").string());
    EXPECT_EQ(again, (std::multiset<std::string>{"AAA111", "BBB222"}));
}

namespace {
// Sets the mtime of every directory under (and including) `dir` to one
// fixed time long past, as if nothing had changed there for a while.
void age_directories(const fs::path& dir) {
    auto age = [](const fs::path& p) {
        timespec times[2] = {{1'600'000'000, 0}, {1'600'000'000, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
    };
    for (auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_directory()) age(e.path());
    age(dir);
}

} // namespace

namespace {
// A deferred/ tree with `files`, its directories long unchanged, and a
// scanner that watches it.
struct Watched {
    using Listing = QueueScanner::Listing;
    TempTree t;
    std::string dir;
    DirStamps stamps;
    QueueScanner s;
    explicit Watched(std::initializer_list<const char*> files) {
        for (const char* f : files)
            t.touch(std::string("deferred/") + f);
        dir = (t.path() / "deferred").string();
        age_directories(dir);
    }
    std::multiset<std::string> pass(Listing listing = Listing::changed) {
        return drain(s, dir, &stamps, listing);
    }
};
} // namespace

TEST(DirStamps, AStampIsTrustedOnlyWhenTheListingBeganWellAfterTheLastChange) {
    DirStamps d;
    const int64_t s = 1'000'000'000;
    d.listed("deferred", 100 * s, 103 * s, "0A");
    ASSERT_NE(d.unchanged("deferred", 100 * s), nullptr);
    EXPECT_EQ(*d.unchanged("deferred", 100 * s), "0A");
    EXPECT_EQ(d.unchanged("deferred", 100 * s + 1), nullptr); // it changed
    EXPECT_EQ(d.unchanged("incoming", 100 * s), nullptr);     // never listed
    // Changed less than two seconds before the listing: a change just after
    // the stat may have left the same mtime, so list it again.
    d.listed("deferred/A", 100 * s, 101 * s, "");
    EXPECT_EQ(d.unchanged("deferred/A", 100 * s), nullptr);
    d.forget("deferred");
    EXPECT_EQ(d.unchanged("deferred", 100 * s), nullptr);
}

TEST(QueueScanner, ListsOnlyTheDirectoriesThatChanged) {
    Watched w({"A/ABCDEF123", "1/1F00D", "1/E/1E77"});
    TempTree& t = w.t;
    QueueScanner& s = w.s;
    const std::string& dir = w.dir;
    // The first pass lists everything, whatever it is asked for.
    EXPECT_EQ(w.pass(), (std::multiset<std::string>{"ABCDEF123", "1F00D", "1E77"}));
    EXPECT_EQ(s.dirs_listed(), 4u);
    // Nothing changed: nothing listed, every directory looked at.
    EXPECT_TRUE(w.pass().empty());
    EXPECT_EQ(s.dirs_listed(), 0u);
    EXPECT_EQ(s.dirs_unchanged(), 4u);
    // A name that comes into a directory two levels down is found; the
    // directory that changed now has a fresh mtime, so it is listed again
    // until its stamp settles.
    t.touch("deferred/1/E/1E88");
    EXPECT_EQ(w.pass(), (std::multiset<std::string>{"1E77", "1E88"}));
    EXPECT_EQ(s.dirs_listed(), 1u);
    EXPECT_EQ(w.pass(), (std::multiset<std::string>{"1E77", "1E88"}));
    age_directories(dir);
    EXPECT_EQ(w.pass().size(), 2u); // its mtime moved back
    EXPECT_TRUE(w.pass().empty());
    // A new hash directory changes its parent.
    t.touch("deferred/B/B0B0");
    EXPECT_EQ(w.pass(), (std::multiset<std::string>{"B0B0"}));
    EXPECT_EQ(s.dirs_listed(), 2u);
    // Listing::every lists all, as without stamps.
    age_directories(dir);
    EXPECT_EQ(w.pass(Watched::Listing::every),
              (std::multiset<std::string>{"ABCDEF123", "1F00D", "1E77", "1E88", "B0B0"}));
    EXPECT_TRUE(w.pass().empty());
}

TEST(QueueScanner, AListingLeftHalfWayIsNotRecorded) {
    Watched w({"AAA111", "BBB222"});
    w.s.start(w.dir, &w.stamps, Watched::Listing::changed);
    ASSERT_TRUE(w.s.next().has_value()); // half-way, then start again
    EXPECT_EQ(w.stamps.size(), 0u);
    EXPECT_EQ(w.pass(), (std::multiset<std::string>{"AAA111", "BBB222"}));
    EXPECT_EQ(w.stamps.size(), 1u);
}

TEST(QueueScanner, DirectoriesAreJudgedWhenThePassStarts) {
    Watched w({"A/AAA111", "B/BBB222"});
    w.pass();
    // A file taken out of A after the start (as the due files are, before
    // the listing) does not make this pass list A; the next pass does.
    w.s.start(w.dir, &w.stamps, Watched::Listing::changed);
    fs::rename(w.t.path() / "deferred/A/AAA111", w.t.path() / "AAA111");
    w.t.touch("deferred/A/AAA333");
    EXPECT_FALSE(w.s.next().has_value());
    EXPECT_EQ(w.s.dirs_listed(), 0u);
    EXPECT_EQ(w.pass(), (std::multiset<std::string>{"AAA333"}));
    EXPECT_EQ(w.s.dirs_listed(), 1u);
}

// The census: each directory's last complete listing, less what left since;
// directories left unlisted keep theirs; a directory that went is dropped.
TEST(QueueScanner, TheCensusCountsWhatTheListingsFound) {
    Watched w({"A/AAA111", "A/AAA222", "B/BBB333"});
    EXPECT_FALSE(w.s.census().has_value()); // no pass ended yet
    w.pass();
    ASSERT_TRUE(w.s.census().has_value());
    EXPECT_EQ(w.s.census()->files, 3u);
    EXPECT_EQ(w.s.census()->oldest, 0); // no birth was reported
    // A pass that lists nothing keeps what the listings found.
    w.pass();
    EXPECT_EQ(w.s.dirs_listed(), 0u);
    EXPECT_EQ(w.s.census()->files, 3u);
    // A file taken out of an unlisted directory by its caller (a due file
    // of the index) leaves the census at once.
    w.s.left(w.dir + "/A");
    EXPECT_EQ(w.s.census()->files, 2u);
    // The next listing of A counts again what is there.
    fs::remove(w.t.path() / "deferred/A/AAA111");
    w.t.touch("deferred/B/BBB444");
    w.t.touch("deferred/B/BBB555");
    w.pass();
    EXPECT_EQ(w.s.census()->files, 4u);
    // A directory that went is dropped at the end of the pass.
    fs::remove_all(w.t.path() / "deferred/B");
    w.pass(Watched::Listing::every);
    EXPECT_EQ(w.s.census()->files, 1u);
}

// What the caller reports while the listing runs: a name that left is not
// counted, and the earliest birth of those that stay is the oldest.
TEST(QueueScanner, TheCallerReportsWhatLeavesAndWhenFilesWereBorn) {
    TempTree t;
    for (const char* id : {"AAA111", "BBB222", "CCC333", "DDD444"})
        t.touch(std::string("incoming/") + id);
    QueueScanner s;
    s.start((t.path() / "incoming").string());
    while (auto id = s.next()) {
        if (*id == "AAA111") s.left_last();    // taken
        if (*id == "BBB222") s.born_last(500); // stays, born at 500
        if (*id == "CCC333") s.born_last(300);
        if (*id == "DDD444") s.born_last(0); // stays, birth not known
    }
    ASSERT_TRUE(s.census().has_value());
    EXPECT_EQ(s.census()->files, 3u);
    EXPECT_EQ(s.census()->oldest, 300);
    // A directory being listed ignores left(): its listing may or may not
    // have seen the file.
    s.start((t.path() / "incoming").string());
    ASSERT_TRUE(s.next().has_value());
    s.left((t.path() / "incoming").string());
    while (s.next()) {
    }
    EXPECT_EQ(s.census()->files, 4u);
    EXPECT_EQ(s.census()->oldest, 0);
}
