// A typed error about one queue file: what went wrong, in which file, at which
// byte offset, what the reader expected there and what it found instead.
// Every failure of the queuefile library is reported as one of these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cqmgr::queuefile {

enum class ErrorKind {
    io,                // read(2)/write(2)/lseek(2) failed
    truncated_header,  // end of file inside a record's type or length
    length_overflow,   // a length field with 5 or more continuation bytes
    length_limit,      // a length above the reader's limit (no allocation done)
    truncated_payload, // end of file inside a record's payload
    bad_pointer,       // a 'p' record whose payload is not a file offset
    pointer_loop,      // more than 10000 backward pointer jumps
    bad_seek,          // a seek target outside the range of file offsets
    unexpected_record, // a record type that is not allowed where it appears
    bad_attribute,     // an 'A' record without "name=value"
    bad_size,          // SIZE record values out of range
    bad_size_flags,    // SIZE record field 4 with bits outside 0x1F
    weird_size,        // SIZE record with 0, 2 fields or no number at all
    old_style_scan,    // a one-field (pre-1.0) SIZE record whose file can't be scanned
    missing_end,       // end of file before the 'E' record
    missing_time,      // no usable 'T' record
    missing_sender,    // no 'S' record
    missing_size,      // no 'C' record
    wrong_record,      // an in-place update found a different record at the offset
    bad_argument,      // an in-place update asked for something that cannot be written
};

// Stable lower-case name of a kind ("truncated_payload"), for JSON and tests.
const char* error_kind_name(ErrorKind kind);

struct FileError {
    ErrorKind kind = ErrorKind::io;
    std::string path;    // the file as the caller named it; "" when unknown
    int64_t offset = -1; // byte offset of the offending record; -1: none applies
    std::string expected;
    std::string found;
    int sys_errno = 0; // for io: the errno of the failed call

    // "queue file PATH: byte offset N: expected X; found Y".
    std::string message() const;
};

// Renders `bytes` for an error message or a dump: printable ASCII as is,
// backslash, double quote and everything else as C escapes (\n, \t, \xHH),
// cut after `max` input bytes with "..." appended.
std::string escape_bytes(std::string_view bytes, size_t max = 200);

} // namespace cqmgr::queuefile
