// File-system helpers: whole-file I/O, directories with owners, recursive
// counting and removal, user lookup, and the instance's temporary directory.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace compat {

// Reads a whole file; throws with the path if it cannot be read.
std::string read_file(const std::string& path);

// Reads a whole file if it exists; returns false if it does not.
bool read_file_if_exists(const std::string& path, std::string& out);

// Writes `content` to `path` (truncating) with `mode`.
void write_file(const std::string& path, const std::string& content, mode_t mode = 0644);

// Creates a directory and sets its exact mode and owner (umask-independent).
void make_dir(const std::string& path, mode_t mode, uid_t uid, gid_t gid);

// Sets the access and modification time of `path` to `seconds_ago` in the past.
void backdate(const std::string& path, int seconds_ago);

// Counts regular files below `dir`, recursing into hashed subdirectories.
// A missing directory counts as zero.
std::uint64_t count_files(const std::string& dir);

// Counts regular files below `dir` that some process holds a lock on
// (flock or fcntl, as /proc/locks lists them), e.g. queue files that a
// delivery agent still has open.
std::uint64_t count_locked_files(const std::string& dir);

// Removes a tree; returns an error description, or "" on success.
std::string remove_tree(const std::string& path) noexcept;

struct UserIds {
    uid_t uid;
    gid_t gid;
};

// Looks up a user's uid and primary gid; throws if there is no such user.
UserIds lookup_user(const std::string& name);

// Looks up a group id; throws if there is no such group.
gid_t lookup_group(const std::string& name);

// A scenario's working directory, where compat-run builds its Postfix
// instances: a mkdtemp directory of mode 0755 (Postfix's unprivileged
// daemons must reach their instance through it) that is removed on
// destruction only if remove_on_exit(true) was called, so that a failed
// scenario's is left for inspection (--keep-failed).  Not the tests'
// scratch directory (cqmgr::test::TempDir), which is always removed.
class WorkDir {
  public:
    explicit WorkDir(const std::string& prefix);
    WorkDir(const WorkDir&) = delete;
    WorkDir& operator=(const WorkDir&) = delete;
    ~WorkDir();

    const std::string& path() const { return path_; }
    // Decides whether the destructor deletes the directory.
    void remove_on_exit(bool remove) { remove_ = remove; }
    bool will_remove() const { return remove_; }

  private:
    std::string path_;
    bool remove_ = false;
};

} // namespace compat
