// The tests' scratch directory: one under /tmp for one test (or one
// fixture), removed with everything in it when the test ends, so that
// tests running side by side never share or leave files.
#pragma once

#include <filesystem>
#include <string>

namespace cqmgr::test {

class TempDir {
  public:
    // Makes /tmp/<name>-XXXXXX (mode 0700, as mkdtemp makes it); throws
    // std::runtime_error when it cannot.
    explicit TempDir(const std::string& name = "cqmgr-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    // The directory's name, or that of `name` in it.
    std::string str() const { return path_.string(); }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    // Writes `text` to `name` in the directory; returns the file's name.
    std::string write(const std::string& name, const std::string& text) const;
    // The contents of `name` in the directory ("" when it is missing).
    std::string read(const std::string& name) const;

  private:
    std::filesystem::path path_;
};

// Makes `dir` the working directory for as long as it lives, then goes
// back (for code that, like the daemon, works relative to the queue
// directory).
class InDirectory {
  public:
    explicit InDirectory(const std::filesystem::path& dir);
    ~InDirectory();
    InDirectory(const InDirectory&) = delete;
    InDirectory& operator=(const InDirectory&) = delete;

  private:
    std::filesystem::path old_;
};

} // namespace cqmgr::test
