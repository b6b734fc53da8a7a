// The primary header block of a queued message, as logical header lines,
// for tables matched against headers (cqmgr_priority_header_maps,
// cqmgr_sender_class_header_maps).  The
// content segment holds the message one line per 'N' record ('L' when a
// long line continues in the next record); 'p' records are followed, as
// a milter's header edits leave them.  A logical header is its first line
// and every following line that starts with a blank, joined with "\n", as
// header_checks sees it.  The block ends at the first empty line (or the
// end of the content).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cqmgr::queuefile {

// Reads the header lines of the message whose content starts at
// `data_offset` (Envelope::data_offset) in open queue file `fd`, reading at
// most `max_bytes` of content: a longer header block is cut there.  A
// damaged record ends the block.
std::vector<std::string> read_header_lines(int fd, int64_t data_offset, size_t max_bytes);

// The header lines of one message, read on first use and kept: the
// features that match header lines share one bounded read of the block,
// and a message none of them needs it for is not read at all.
class HeaderLinesOnce {
  public:
    HeaderLinesOnce(int fd, int64_t data_offset, size_t max_bytes)
        : fd_(fd), data_offset_(data_offset), max_bytes_(max_bytes) {}
    // The lines (read_header_lines), read now if not read yet.
    const std::vector<std::string>& lines() {
        if (!read_) lines_ = read_header_lines(fd_, data_offset_, max_bytes_);
        read_ = true;
        return lines_;
    }
    // Whether the block was read.
    bool read() const { return read_; }

  private:
    int fd_;
    int64_t data_offset_;
    size_t max_bytes_;
    bool read_ = false;
    std::vector<std::string> lines_;
};

} // namespace cqmgr::queuefile
