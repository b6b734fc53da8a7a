// The primary header block of a queued message, as logical header lines,
// for tables matched against headers (cqmgr_priority_header_maps).  The
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

} // namespace cqmgr::queuefile
