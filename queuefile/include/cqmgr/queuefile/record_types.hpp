// What each record type letter means: Postfix's printable names (as postcat
// prints them) and the sets of letters allowed in each queue-file segment.
#pragma once

#include <string_view>

namespace cqmgr::queuefile {

// The segments of a queue file, in file order.
enum class Segment { envelope, content, extracted };

// "envelope", "content" or "extracted".
const char* segment_name(Segment s);

namespace region {
// Letters Postfix allows in the initial envelope segment (cleanup's and
// qmgr's view; 'M' ends the segment).
inline constexpr std::string_view envelope = "MCTcFILSDRO/WVA>K<ion";
// Letters allowed in the content segment ('X' ends it).
inline constexpr std::string_view content = "XLNw";
// Letters allowed in the extracted segment ('E' ends it).
inline constexpr std::string_view extracted = "EDRO/PreAFIL>Kon";
} // namespace region

// True when `type` (a byte value) is one of `letters`.
bool type_in(int type, std::string_view letters);

// Postfix's name for a record type ("recipient", "message_size", ...);
// "unknown_record_type" for letters Postfix has no name for.  'L' is named
// "content_filter", as postcat does in every segment.
const char* record_type_name(int type);

// The name of 'L' in the content segment ("unterminated_text") and of every
// other type as record_type_name() gives it.
const char* record_type_name_in(int type, Segment s);

} // namespace cqmgr::queuefile
