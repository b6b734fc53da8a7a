// What a queue scan remembers of each directory it listed to the end: the
// directory's mtime (in nanoseconds) as a stat() just before the listing
// saw it, and its one-character (hash) subdirectories.  A later pass may
// leave such a directory unlisted while its mtime is unchanged: creating,
// renaming or removing a name in a directory sets its mtime to the time of
// the change, so a name that came in after that stat() moved the mtime.
//
// An unchanged mtime proves nothing when the directory changed just before
// the stat(): the kernel stamps times from a clock that runs up to a tick
// behind and, on some file systems, in whole seconds, so a change a moment
// after the stat() can leave the same mtime.  Such a stamp is not
// "settled": the directory is listed again at every pass until a listing
// begins at least `settle_ns` after its last change.  The queue manager's
// clock and the file system's must agree (a local file system); a clock
// that steps back defeats the comparison until the next full listing.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace cqmgr::queuefile {

class DirStamps {
  public:
    // Two seconds: a whole-second file-system granularity plus the tick.
    static constexpr int64_t settle_ns = 2'000'000'000;

    // Records a complete listing of `path`: its mtime `mtime_ns` as seen
    // by a stat() made at or after `before_ns` (the clock read first), and
    // its subdirectories (one character each).
    void listed(const std::string& path, int64_t mtime_ns, int64_t before_ns, std::string subdirs);
    // The subdirectories of `path` when it need not be listed again: its
    // mtime is still `mtime_ns` and its stamp is settled; nullptr when it
    // must be listed.
    const std::string* unchanged(const std::string& path, int64_t mtime_ns) const;
    // The subdirectories of `path` as its last listing found them, whether
    // it changed or not; nullptr when it was never listed.
    const std::string* subdirs(const std::string& path) const {
        auto it = dirs_.find(path);
        return it == dirs_.end() ? nullptr : &it->second.subdirs;
    }
    // Forgets `path` (it is gone, or not a directory).
    void forget(const std::string& path) { dirs_.erase(path); }

    std::size_t size() const { return dirs_.size(); }

  private:
    struct Stamp {
        int64_t mtime_ns = 0;
        bool settled = false;
        std::string subdirs;
    };
    std::unordered_map<std::string, Stamp> dirs_;
};

} // namespace cqmgr::queuefile
