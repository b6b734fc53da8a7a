// The queue manager's file store: every file-system call the queue manager
// makes on a queue file or its logs goes through here.  Messages are taken
// from incoming or deferred into active, read in batches, updated in place,
// and leave active by removal, deferral (with a not-before time in the
// mtime), quarantine in corrupt, or a return to incoming.
//
// One error convention for all of it: an operation returns StoreResult,
// empty on success, else a StoreError with the errno of the failed call and
// a text in Postfix's words.  ENOENT (`gone()`) is its own case everywhere,
// because postsuper may remove or move any file at any moment; the caller
// decides what a failure means (stock qmgr treats most as fatal, this
// daemon retries them).
#pragma once

#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/queue_layout.hpp"

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace cqmgr::queuefile {

struct StoreError {
    int sys_errno = 0; // errno of the failed call; 0 for a damaged record
    std::string text;  // what failed, as Postfix words it

    bool gone() const { return sys_errno == ENOENT; }
};
using StoreResult = std::optional<StoreError>;

class ActiveQueue {
  public:
    // `dont_remove`: finished files go to saved/ instead of being removed.
    ActiveQueue(QueueLayout layout, bool dont_remove);

    // The path of `id` in `queue`, relative to the queue directory.
    std::string path(std::string_view queue, std::string_view id) const {
        return layout_.path(queue, id);
    }

    // What a scan sees of `queue`/`id` before it takes the file (Postfix's
    // readiness check): a regular file with u=rwx is ready.  `warning` says
    // what is wrong with a file that is not usable at all ("active/ID: uid 0:
    // not a regular file"); a file that is only not complete yet is not ready
    // without a warning.
    struct Readiness {
        bool ready = false;
        mode_t mode = 0;
        int64_t mtime = 0;
        // When the file was made (renames keep it: for a queue file, the
        // time cleanup wrote it); 0 where the file system does not say.
        int64_t born = 0;
        std::string warning;
    };
    Readiness check(std::string_view queue, std::string_view id) const;

    // Files a previous queue manager left in active, to be claimed in place
    // (claim() from "active") or moved back by recover().
    std::vector<std::string> leftovers() const;
    // Gives a leftover file the mtime `when` and moves it back to incoming.
    StoreResult recover(std::string_view id, int64_t when) const;

    // Taking a message: `from` -> active (no move when `from` is "active"),
    // opened for reading and writing and locked exclusively without
    // waiting.  `step` says which step failed.
    struct Claim {
        enum class Step { none, move, open, lock } step = Step::none;
        int fd = -1;
        StoreResult error;
    };
    Claim claim(std::string_view from, std::string_view id) const;
    // Clears the mode bits in `clear` (the g+r flush request) on a claimed file.
    StoreResult clear_mode(int fd, std::string_view id, mode_t mode, mode_t clear) const;
    // Reads the next batch of at most `limit` recipients of an active file;
    // `fd` < 0 opens it for this batch only.
    ReadResult read(std::string_view id, Envelope& env, int limit, int fd = -1) const;

    // In-place updates of an active file (see update.hpp).
    StoreResult mark_done(std::string_view id, int64_t offset) const;
    StoreResult rewrite_warn_time(std::string_view id, int64_t offset) const;
    StoreResult kill_record(std::string_view id, int64_t offset) const;

    // Leaving active.  defer_until() and release() set the not-before time
    // (atime and mtime) first.
    StoreResult defer_until(std::string_view id, int64_t when) const; // -> deferred
    StoreResult release(std::string_view id, int64_t when) const;     // -> incoming
    StoreResult quarantine(std::string_view id) const;                // -> corrupt
    StoreResult remove(std::string_view id) const;                    // or -> saved/
    // A deferred file that stays there: its not-before time (atime and
    // mtime) becomes `when` (cqmgr_dead_backlog).
    StoreResult postpone(std::string_view id, int64_t when) const;
    // True when an active file still looks complete (regular, u=rwx): an
    // agent that found it corrupt takes the bits away.
    bool intact(std::string_view id) const;

    // The per-message logs of the bounce, defer and trace services.
    enum class LogState { absent, empty, present };
    LogState log_state(std::string_view log_queue, std::string_view id) const;
    // Removes the log.  A log that is not there (the usual case: the
    // defer log is removed without looking first, as stock does) gives an
    // error that is gone() and has no text.
    StoreResult remove_log(std::string_view log_queue, std::string_view id) const;

  private:
    // Sets atime and mtime of `queue`/`id` to `when`.
    StoreResult set_time(std::string_view queue, std::string_view id, int64_t when,
                         std::string_view who) const;
    // Moves `id` between queues; the error text names `who` as stock does.
    StoreResult move(std::string_view from, std::string_view to, std::string_view id,
                     std::string_view who) const;

    // The path of `id` in `queue` in a buffer reused from call to call,
    // valid until the next call.
    const std::string& scratch_path(std::string_view queue, std::string_view id) const {
        layout_.path_into(scratch_, queue, id);
        return scratch_;
    }

    QueueLayout layout_;
    bool dont_remove_;
    mutable std::string scratch_;
};

} // namespace cqmgr::queuefile
