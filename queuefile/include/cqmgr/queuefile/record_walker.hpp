// Walking a queue file record by record in file order, the way postcat(1)
// does: envelope segment, message content (or a jump over it using the SIZE
// record), extracted segment, end record; pointer records shown and
// followed.  For tools (qf-dump), tests and the fuzzer; the queue manager
// itself uses read_envelope().
#pragma once

#include "cqmgr/queuefile/error.hpp"
#include "cqmgr/queuefile/pointer.hpp"
#include "cqmgr/queuefile/record.hpp"
#include "cqmgr/queuefile/record_types.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace cqmgr::queuefile {

struct WalkOptions {
    // Follow 'p' records to their targets (postcat default).  When false the
    // file is read linearly to its end, past 'E' (postcat -r).
    bool follow_pointers = true;
    // Jump from 'M' straight to the 'X' record at data_offset + data_size
    // (postcat -e, and what qmgr does).  When false every content record is
    // returned.
    bool skip_content = true;
};

struct WalkedRecord {
    int64_t offset = 0; // where the record's type byte is
    int type = 0;       // 0..255
    std::string payload;
    Segment segment = Segment::envelope; // the segment the record belongs to
    // False for a type that does not belong in its segment (postcat shows
    // such records; qmgr would call the file corrupt).  Pointers are allowed
    // everywhere.
    bool allowed = true;
    // For 'p' records that were followed: the target (0 for a placeholder).
    std::optional<int64_t> pointer_target;
};

class RecordWalker {
  public:
    // Reads `fd` from offset 0; `path` names the file in errors.
    RecordWalker(int fd, std::string path, WalkOptions options = {});

    // Returns the next record, or false at the end (after 'E', or at end of
    // file when not following pointers) or on a failure (see failure()).
    bool next(WalkedRecord& out);

    // Set when next() returned false because of damage.
    const std::optional<FileError>& failure() const { return failure_; }
    // The first SIZE record's data_size and data_offset, once seen (-1 before).
    int64_t data_size() const { return data_size_; }
    int64_t data_offset() const { return data_offset_; }

  private:
    RecordStream in_;
    WalkOptions options_;
    PointerFollower pointers_;
    Segment segment_ = Segment::envelope;
    bool done_ = false;
    bool first_ = true;
    int64_t data_size_ = -1, data_offset_ = -1;
    std::optional<FileError> failure_;
};

} // namespace cqmgr::queuefile
