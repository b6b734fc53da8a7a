// In-place updates of a queue file, as Postfix makes them: qmgr (and the
// delivery agents) never rewrite a file, they overwrite bytes of one record.
//   * a finished recipient: 'D' over the 'R' type byte (deliver_completed),
//   * after a delay warning: the whole 'W' record rewritten, same size,
//     payload "%15ld" of the next warning time (-1: no more warnings),
//   * after a trace report: 'K' over the type byte of the 'A trace_flags'
//     record (qmgr_message_kill_record).
// Each is one seek, one write(2) of the new bytes (Postfix's stream flush)
// and no fsync, in that order, like Postfix.  Unlike Postfix, each first reads
// the record at the offset and refuses (wrong_record) when it is not the one
// to be changed, so that a stale offset cannot damage another record.
#pragma once

#include "cqmgr/queuefile/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::queuefile {

// Marks the recipient whose 'R' record starts at `offset` as done.  A 'D'
// already there is left as it is.  `fd` must be open for reading and writing.
std::optional<FileError> mark_recipient_done(int fd, int64_t offset, std::string_view path = {});

// Rewrites the 'W' record at `offset` with `when` ("%15ld"; -1 after the
// warning was sent).  The record must have a 15-byte payload.
std::optional<FileError> rewrite_warn_time(int fd, int64_t offset, int64_t when = -1,
                                           std::string_view path = {});

// Turns the record at `offset` ('A', e.g. trace_flags) into a killed
// record 'K'.  A 'K' already there is left as it is.
std::optional<FileError> kill_record(int fd, int64_t offset, std::string_view path = {});

// The same three, opening `path` with O_RDWR for the one update and closing
// it afterwards (what qmgr does for the 'W' and 'K' updates).
std::optional<FileError> mark_recipient_done(const std::string& path, int64_t offset);
std::optional<FileError> rewrite_warn_time(const std::string& path, int64_t offset,
                                           int64_t when = -1);
std::optional<FileError> kill_record(const std::string& path, int64_t offset);

} // namespace cqmgr::queuefile
