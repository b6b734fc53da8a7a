// One queue directory's scan, restartable, with the request flags of stock
// qmgr's scans: a scan runs when a start was asked for; a start asked for
// while it runs makes it start over when it reaches its end; the A (ignore
// not-before times) and F (ignore defer_transports) modifiers apply to the
// pass that runs now and to the next one.
//
// A scan that watches its directories (the deferred scan with the due
// index) remembers each directory's mtime (queuefile/dir_stamps.hpp); its
// passes without `full` or A list only the directories that changed since
// they were last listed ("partial" passes), the others every directory.
#pragma once

#include "cqmgr/queuefile/queue_scanner.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace cqmgr::qmgr {

namespace scan_flag {
inline constexpr int all = 1;   // A: ignore the not-before time (mtime)
inline constexpr int flush = 2; // F: ignore defer_transports
inline constexpr int start = 4; // a pass is wanted
// The next pass looks at every file even with the due index on (it does
// not carry over to a running pass, which a start request restarts anyway).
inline constexpr int full = 8;
} // namespace scan_flag

class Scan {
  public:
    explicit Scan(std::string queue) : queue_(std::move(queue)) {}

    // Makes the passes that begin from now on remember directory mtimes
    // and, without `full` or A, list only the directories that changed.
    void watch_directories() { watch_ = true; }

    // Records a request: the modifiers in `flags` also apply to a running
    // pass; with scan_flag::start, a pass starts now unless one runs.  An
    // A that comes during a partial pass restarts it as a complete one.
    void request(int flags);
    // The next name of the pass, or nullopt when no pass runs or it ended
    // (a pending start then begins the next pass).
    std::optional<std::string> next();
    // Ends the pass now and asks for another one, which begins at the next
    // call of next().
    void restart_later();

    const std::string& queue() const { return queue_; }
    bool running() const { return running_; }
    int flags() const { return flags_; }
    // True when the running (or last) pass lists only the directories that
    // changed, so that names in the others are not seen.
    bool partial() const { return partial_; }
    // Directories the running (or last) pass listed, and left unlisted.
    std::size_t dirs_listed() const { return scanner_.dirs_listed(); }
    std::size_t dirs_unchanged() const { return scanner_.dirs_unchanged(); }
    // The queue's files as the scan saw them (queue_scanner.hpp), and what
    // its caller reports of the name next() returned last, or of a file
    // in directory `dir` that left the queue.
    std::optional<queuefile::QueueScanner::Census> census() const { return scanner_.census(); }
    void born_last(int64_t born) { scanner_.born_last(born); }
    void left_last() { scanner_.left_last(); }
    void left(const std::string& dir) { scanner_.left(dir); }
    // How many passes reached their end (a pass restarted by
    // restart_later() did not).
    unsigned passes_ended() const { return passes_ended_; }
    // How many passes began; the running pass is number passes_begun().
    unsigned passes_begun() const { return passes_begun_; }

  private:
    void begin();

    std::string queue_;
    queuefile::QueueScanner scanner_;
    queuefile::DirStamps stamps_;
    bool watch_ = false;
    bool partial_ = false;
    bool running_ = false;
    int flags_ = 0;  // of the pass that runs
    int nflags_ = 0; // for the next pass (scan_flag::start: one is wanted)
    unsigned passes_ended_ = 0;
    unsigned passes_begun_ = 0;
};

} // namespace cqmgr::qmgr
