// Postfix queue-file records: a type byte, a length in 7-bit groups (least
// significant first, bit 7 = more), then the payload.  RecordStream reads them
// from a file descriptor through a buffer and follows nothing by itself; the
// envelope reader and the record walker decide when to follow `p` pointers.
#pragma once

#include "cqmgr/queuefile/error.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace cqmgr::queuefile {

// Record type letters (Postfix's names for them, our spelling;
// docs/postfix-facts.md §2.2).
namespace rec {
inline constexpr char size = 'C', time = 'T', ctime = 'c', fullname = 'F', insp = 'I', filt = 'L',
                      from = 'S', rcpt = 'R', done = 'D', drcp = '/', orcp = 'O', warn = 'W',
                      attr = 'A', kill = 'K', rdr = '>', mesg = 'M', norm = 'N', cont = 'L',
                      dtxt = 'w', xtra = 'X', rrto = 'r', erto = 'e', prio = 'P', ptr = 'p',
                      verp = 'V', dsn_ret = '<', dsn_envid = 'i', dsn_orcpt = 'o', dsn_notify = 'n',
                      end = 'E', flgs = 'f', delay = 'd', milt_count = 'm';
inline constexpr int eof = -1;
inline constexpr int error = -2;
} // namespace rec

// Limit on one record's payload.  Envelope records are short (addresses,
// attributes) and cleanup splits content lines; anything near this is a
// damaged length field.  Postfix itself has no limit here.
inline constexpr size_t max_record_payload = 4 * 1024 * 1024;

// Payload width of the fixed-size records that are rewritten in place
// ('p' pointers and 'W' warning times, "%15ld").
inline constexpr size_t fixed_number_width = 15;

// Encodes one record (for tests and for in-place rewrites).
std::string encode_record(char type, std::string_view payload);

// Encodes the length field of a record alone.
std::string encode_length(size_t length);

class RecordStream {
  public:
    // Reads from `fd` starting at offset 0; does not own the descriptor.
    // `path` only names the file in errors.
    explicit RecordStream(int fd, std::string path = {}) : fd_(fd), path_(std::move(path)) {}
    RecordStream(RecordStream&&) = default;
    RecordStream& operator=(RecordStream&&) = default;
    // Keeps the read buffer for the thread's next stream.
    ~RecordStream();

    // Reads the next record.  Returns its type (0..255), rec::eof at a clean
    // end of file, or rec::error (see failure()) on a short or damaged record.
    int get(std::string& payload);

    // Current logical offset (where the next record starts).
    off_t tell() const { return buf_start_ + static_cast<off_t>(pos_); }
    // Offset of the record that get() read last (or failed on).
    off_t record_start() const { return record_start_; }
    // Type byte of that record (also after a failure past the type byte);
    // -1 when not even the type byte could be read.
    int record_type() const { return record_type_; }
    // Declared payload length of that record (0 until its length was read).
    size_t record_length() const { return record_length_; }
    // Repositions; returns false (and sets failure()) on a negative offset.
    bool seek(off_t offset);

    // The last failure (kind, path, offset, expected/found); valid after
    // get() returned rec::error or seek() returned false.
    const FileError& failure() const { return failure_; }
    // failure().message(), or "" when nothing failed.
    std::string error() const { return failed_ ? failure_.message() : std::string(); }
    const std::string& path() const { return path_; }

  private:
    // Makes at least one unread byte available; false at EOF or error.
    bool fill();
    // Reads one byte; -1 at EOF/error.
    int get_byte();
    // Records a failure and returns rec::error.
    int fail(ErrorKind kind, off_t offset, std::string expected, std::string found);

    int fd_;
    std::string path_;
    std::unique_ptr<char[]> buf_; // read_chunk bytes, taken on first use
    size_t buf_len_ = 0;          // valid bytes in buf_
    off_t buf_start_ = 0;
    size_t pos_ = 0;
    off_t record_start_ = 0;
    int record_type_ = -1;
    size_t record_length_ = 0;
    bool failed_ = false;
    bool io_error_ = false;
    FileError failure_;
};

} // namespace cqmgr::queuefile
