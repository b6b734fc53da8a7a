// A walk over one queue directory that yields one name at a time, descending
// into one-character (hash) subdirectories as Postfix's scanner does. Only
// as much of the directory is read as has been asked for, so the first
// message of a large queue can go out before the whole queue is listed.
//
// Given DirStamps, the walk records each directory it lists to the end
// (dir_stamps.hpp), and a walk of Listing::changed lists only the
// directories whose mtime moved since (or whose stamp is not settled); it
// still descends into the remembered subdirectories of those it leaves
// unlisted, so a change deep down is found.  Such a walk stat()s every
// directory it knows when it starts, and decides then which to list: what
// the caller does to the queue meanwhile (taking due files out of it
// before the listing) must not make the directories look changed in this
// pass (it does in the next one: their mtimes moved).
//
// The walk also keeps a census of the queue: per directory, how many queue
// files its last complete listing returned (less those that left since,
// as the caller reports them), and the earliest birth time among those the
// caller reported as staying.  A directory left unlisted keeps its census:
// its unchanged mtime says that no name came or went.  So the census costs
// no system call beyond the walk's own.
#pragma once

#include "cqmgr/queuefile/dir_stamps.hpp"

#include <cstddef>
#include <dirent.h>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace cqmgr::queuefile {

class QueueScanner {
  public:
    enum class Listing {
        every,   // every directory is listed
        changed, // only directories that changed since their stamp
    };

    QueueScanner() = default;
    QueueScanner(const QueueScanner&) = delete;
    QueueScanner& operator=(const QueueScanner&) = delete;
    ~QueueScanner();

    // Starts a new pass over `queue` (relative to the working directory),
    // ending any pass still open. A missing directory gives an empty pass.
    // With `stamps`, complete listings are recorded there, and `listing`
    // says which directories are listed.
    void start(const std::string& queue, DirStamps* stamps = nullptr,
               Listing listing = Listing::every);
    // The next name that passes queue_id_ok, or nullopt at the end of the pass.
    // Names added or removed during the pass may or may not be seen (readdir).
    std::optional<std::string> next();

    // Directories this pass listed, and left unlisted (unchanged).
    std::size_t dirs_listed() const { return listed_; }
    std::size_t dirs_unchanged() const { return unchanged_; }

    // The queue's files: how many, and the earliest birth time (Unix
    // seconds; 0 when none is known) of those reported to born_last().
    struct Census {
        std::size_t files = 0;
        int64_t oldest = 0;
    };
    // The census as each directory's latest complete listing found it, less
    // what left since; nullopt until a pass has reached its end.
    std::optional<Census> census() const;
    // The name next() returned last stays in the queue, and its file was
    // made at `born` (0: not known).
    void born_last(int64_t born);
    // The file of the name next() returned last left the queue (taken, or
    // found missing): the listing under way does not count it.
    void left_last();
    // A file of directory `dir` (its path as next() walks it, e.g.
    // "deferred/A") that next() did not just return left the queue: the
    // directory's census drops by one, unless its listing is under way
    // (which may or may not have seen the file).
    void left(const std::string& dir);

  private:
    struct Level {
        DIR* dir; // nullptr: left unlisted, only its subdirectories are visited
        std::string path;
        int depth;
        int64_t mtime_ns = 0;  // as stat() saw it before the listing
        int64_t before_ns = 0; // the clock before that stat()
        std::string subdirs;   // listed: those found so far; unlisted: those to visit
        std::size_t next_subdir = 0;
        Census census{}; // listed: what the listing found so far
    };
    // A directory's census and the pass that last listed or visited it.
    struct DirCensus {
        Census census;
        unsigned pass = 0;
    };
    // What a stat() of a directory found: its mtime, and the clock read
    // just before.
    struct Seen {
        bool dir = false;
        int64_t mtime_ns = 0;
        int64_t before_ns = 0;
    };
    static Seen look(const std::string& path);
    // Looks at `path` and the subdirectories its stamp remembers, depth
    // first, into seen_ (Listing::changed, at start()).
    void look_ahead(const std::string& path, int depth);
    // Enters directory `path` at `depth`: opens it for listing, or, when it
    // is unchanged, visits its remembered subdirectories.  False when it is
    // not a directory that can be read.
    bool enter(const std::string& path, int depth);
    // Closes every open directory.
    void stop();

    std::vector<Level> open_;
    // Listing::changed: what the look at start() saw of each known directory.
    std::unordered_map<std::string, Seen> seen_;
    DirStamps* stamps_ = nullptr;
    Listing listing_ = Listing::every;
    std::size_t listed_ = 0;
    std::size_t unchanged_ = 0;
    // The census by directory path; the pass that runs; whether one ran to
    // its end (and so the census covers the queue).
    std::unordered_map<std::string, DirCensus> census_;
    unsigned pass_ = 0;
    bool running_ = false;
    bool counted_ = false;
};

} // namespace cqmgr::queuefile
