#include "cqmgr/queuefile/queue_layout.hpp"
#include "cqmgr/queuefile/queue_scanner.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <unistd.h>

using namespace cqmgr::queuefile;
namespace fs = std::filesystem;

namespace {

// A private directory under the system temp dir, removed at the end.
struct TempTree {
    fs::path root;
    TempTree() {
        std::string t = (fs::temp_directory_path() / "qscanXXXXXX").string();
        root = ::mkdtemp(t.data());
    }
    ~TempTree() { fs::remove_all(root); }
    void file(const std::string& rel) {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel) << "x";
    }
};

// Every name the scanner yields for `dir`.
std::multiset<std::string> drain(QueueScanner& s, const std::string& dir) {
    s.start(dir);
    std::multiset<std::string> out;
    while (auto id = s.next())
        out.insert(*id);
    return out;
}

} // namespace

TEST(QueueScanner, DescendsIntoHashDirectoriesAndSkipsBadNames) {
    TempTree t;
    t.file("deferred/A/ABCDEF123");
    t.file("deferred/A/AB99");
    t.file("deferred/1/1F00D");
    t.file("deferred/1/E/1E77");  // two levels deep
    t.file("deferred/not.an.id"); // fails queue_id_ok
    t.file("deferred/TOPLEVEL42");
    QueueScanner s;
    auto got = drain(s, (t.root / "deferred").string());
    EXPECT_EQ(got,
              (std::multiset<std::string>{"ABCDEF123", "AB99", "1F00D", "1E77", "TOPLEVEL42"}));
    // scan_queue lists the same names.
    auto list = scan_queue((t.root / "deferred").string());
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
    t.file("incoming/AAA111");
    t.file("incoming/BBB222");
    QueueScanner s;
    s.start((t.root / "incoming").string());
    ASSERT_TRUE(s.next().has_value()); // half-way, then start again
    auto again = drain(s, (t.root / "incoming").string());
    EXPECT_EQ(again, (std::multiset<std::string>{"AAA111", "BBB222"}));
}
