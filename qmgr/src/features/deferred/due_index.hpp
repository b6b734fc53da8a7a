// The due index (cqmgr_deferred_due_index): the files of deferred/ that the
// deferred scan looked at and left there, by queue ID and ordered by their
// not-before time (the mtime the queue manager gave them when it deferred
// them, as a look at the file found it).
//
// With it, a periodic pass of the deferred scan does not list deferred/:
// it takes the entries that are due from the front of the order, looks at
// (lstat) those files only, and lists only the hash directories that
// changed since their last listing (Scan::watch_directories,
// queuefile/dir_stamps.hpp), to find the names that came in meanwhile
// (mail cqmgr deferred again, postsuper -H); of those it looks at the
// names the index does not know.  Full passes list and look at every file
// as stock does, and renew the index: at start-up, on a D trigger
// (postqueue -f, sendmail -q, postfix flush), with A, and once an hour.
//
// The index must hold every file the scan leaves in deferred/, since a
// periodic pass sees no other name in a directory that did not change:
// a file looked at and not due is noted with its mtime; a file left for
// any other reason (due but held by the recovery ramp or postponed by the
// dead backlog, in memory already, not ready, a failed take) is noted as
// due (0), so the next pass looks at it again, as stock's would.  Only a
// file found missing, or taken into the active queue, is not noted.
//
// An entry taken from the front is out of the index until its file is
// noted again.  Entries noted during a pass are parked until the pass
// ends, so that a pass looks at a file once (a held file that is still due
// does not come round again in the same pass); parked entries are known
// (a listing passes over them) but not taken from the front.  A full pass
// that ended knows every file: the entries it did not note (files that
// left deferred another way: postsuper -d, -h, -r, flush(8)) are dropped
// then; until then such an entry costs at most one lstat when it comes due.
//
// What the index cannot see is an mtime another program changes in place
// (no rename): the file is looked at when its old time comes, or at the
// next full pass.  Postfix's own programs change times only on files they
// move.
//
// Each entry also keeps the file's birth time as the look found it (0 when
// the file system does not say), so that the census of deferred/ (its
// oldest file, queue_scanner.hpp) needs no look at files that are not due.
//
// Memory: the queue ID in a hash-table node with its time and birth time
// (4 bytes each, Unix seconds) and its place in the order (4 bytes), one
// pointer in the order: about 100 bytes per deferred file (about 110 at the
// peak, when a full pass ends and the order is rebuilt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class DueIndex {
  public:
    struct Due {
        std::string id;
        int64_t time = 0;
        int64_t born = 0;
    };

    // Remembers that file `id` is in deferred/ and not due before `time`
    // (seconds; 0: look at it at the next pass), replacing what was known;
    // its file was made at `born` (0: not known).  The entry is parked
    // until the pass ends.
    void note(const std::string& id, int64_t time, int64_t born = 0);
    // The not-before time of `id`, or nullopt when it is not known; with
    // `born`, its birth time goes there.
    std::optional<int64_t> known(const std::string& id, int64_t* born = nullptr) const;
    // Takes the entry with the earliest time out of the index when it is
    // due at `now` (its time not more than a second ahead, the queue
    // manager's margin); parked entries are not taken.
    std::optional<Due> take_due(int64_t now);
    // Forgets `id` (its file left deferred/).
    void forget(const std::string& id);
    // A pass begins or was abandoned: parked entries join the order.
    void unpark();
    // A pass ended; when it was `complete` (it listed and looked at every
    // file), the entries it did not note are dropped.  Parked entries join
    // the order.
    void pass_ended(bool complete);

    std::size_t size() const { return entries_.size(); }
    std::size_t parked() const { return parked_.size(); }

  private:
    struct Slot {
        uint32_t time;  // Unix seconds, clamped
        uint32_t where; // its index in order_, or in parked_ with parked_bit
        uint32_t born;  // Unix seconds, clamped; 0: not known
    };
    using Node = std::unordered_map<std::string, Slot>::value_type;
    static constexpr uint32_t parked_bit = 0x80000000u;

    // The order is a binary min-heap of entries by time; each entry knows
    // its place, so that it can leave from anywhere.
    bool earlier(std::size_t a, std::size_t b) const {
        return order_[a]->second.time < order_[b]->second.time;
    }
    void place(std::size_t i) { order_[i]->second.where = static_cast<uint32_t>(i); }
    void sift_up(std::size_t i);
    void sift_down(std::size_t i);
    // Takes `n` out of the order or the parked list (not out of entries_).
    void detach(Node& n);

    std::unordered_map<std::string, Slot> entries_;
    std::vector<Node*> order_;
    std::vector<Node*> parked_;
};

} // namespace cqmgr::qmgr
