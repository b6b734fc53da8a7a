// The SIZE record ('C'), always the first record: six "%15ld" numbers that
// cleanup rewrites in place at commit time.  Old (pre-1.0) files carry only
// the first number; their content start is found by scanning for 'M'.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cqmgr::queuefile {

struct SizeRecord {
    long data_size = 0;   // 1: bytes from data_offset to the 'X' record
    long data_offset = 0; // 2: offset of the first content record
    int rcpt_count = 0;   // 3: recipient records cleanup wrote
    int qmgr_flags = 0;   // 4: 0x01 mixed recipients, 0x1e DSN NOTIFY union << 1
    long cont_length = 0; // 5: real content length (Postfix >= 2.4)
    int smtputf8 = 0;     // 6: SMTPUTF8 flags (Postfix >= 3.0)
};

// Reads a SIZE payload as qmgr does, with the results of
// sscanf("%ld %ld %d %d %ld %d") but parsed in place: fills the fields it
// could convert (the others keep their value in `out`) and returns how many
// it converted (0..6, or -1 when the payload is empty or only white space,
// like sscanf's EOF).
int parse_size_record(std::string_view payload, SizeRecord& out);

// Formats the six-field payload exactly as cleanup writes it.
std::string format_size_record(const SizeRecord& s);

} // namespace cqmgr::queuefile
