// The due index (cqmgr_deferred_due_index): what the deferred scan learnt of
// the files it left in deferred because they were not due yet, by queue ID:
// their not-before time (the mtime the queue manager gave them when it
// deferred them).  A periodic pass of the deferred scan still lists every
// name, in the directory's order, but looks at (lstat) only the files that
// are due by the index, or that it does not know; the others are passed
// over.  What the index cannot see, because it does not rename a file
// (another program changing a file's mtime in place), is seen at the next
// full pass, which looks at every file as stock does: at start-up, on a D
// trigger (postqueue -f, sendmail -q, postfix flush) and once an hour.
//
// An entry is only ever a reason to pass a file over.  It is dropped as
// soon as its file is looked at and found due, missing or not ready (so the
// next pass looks again), and entries whose names a complete pass did not
// list (files removed or moved away meanwhile: postsuper -d, -h, -r,
// flush(8)) are swept at its end.  A file that comes into deferred (cqmgr
// deferring it again, postsuper -H releasing it) is a new name to the index
// and is looked at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace cqmgr::qmgr {

class DueIndex {
  public:
    // Remembers that file `id` is not due before `mtime` (seconds), as
    // pass number `pass` saw it.
    void note(const std::string& id, int64_t mtime, unsigned pass);
    // True when `id` is known not to be due at `now` (its not-before time
    // more than a second ahead, the queue manager's margin); the entry
    // counts as listed by pass `pass`.  `mtime` is set to its time.
    bool not_due(const std::string& id, int64_t now, unsigned pass, int64_t& mtime);
    // Forgets `id`: its file is due, gone or not ready, and is looked at
    // again by the next pass that lists it.
    void forget(const std::string& id) { entries_.erase(id); }
    // Forgets the entries that pass number `pass`, which ended, did not list.
    void sweep(unsigned pass);

    std::size_t size() const { return entries_.size(); }

  private:
    struct Entry {
        int64_t mtime = 0;
        unsigned seen = 0; // the last pass that listed its name
    };
    std::unordered_map<std::string, Entry> entries_;
};

} // namespace cqmgr::qmgr
