// Postfix queue-file records: a type byte, a length in 7-bit groups (least
// significant first, bit 7 = more), then the payload.  RecordStream reads them
// from a file descriptor through a buffer and follows nothing by itself; the
// envelope reader decides when to follow `p` pointers.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace cqmgr::queuefile {

// Record type letters (Postfix's rec_type.h names, our spelling).
namespace rec {
inline constexpr char size = 'C', time = 'T', ctime = 'c', fullname = 'F', insp = 'I',
                      filt = 'L', from = 'S', rcpt = 'R', done = 'D', drcp = '/', orcp = 'O',
                      warn = 'W', attr = 'A', kill = 'K', rdr = '>', mesg = 'M', norm = 'N',
                      cont = 'L', dtxt = 'w', xtra = 'X', rrto = 'r', erto = 'e', prio = 'P',
                      ptr = 'p', verp = 'V', dsn_ret = '<', dsn_envid = 'i', dsn_orcpt = 'o',
                      dsn_notify = 'n', end = 'E';
inline constexpr int eof = -1;
inline constexpr int error = -2;
} // namespace rec

// Limit on one record's payload.  Envelope records are short (addresses,
// attributes); anything near this is a damaged length field.
inline constexpr size_t max_record_payload = 4 * 1024 * 1024;

// Encodes one record (for tests and for in-place rewrites).
std::string encode_record(char type, std::string_view payload);

class RecordStream {
  public:
    // Reads from `fd` starting at offset 0; does not own the descriptor.
    explicit RecordStream(int fd) : fd_(fd) {}

    // Reads the next record.  Returns its type (0..255), rec::eof at a clean
    // end of file, or rec::error (see error()) on a short or damaged record.
    int get(std::string& payload);

    // Current logical offset (where the next record starts).
    off_t tell() const { return buf_start_ + static_cast<off_t>(pos_); }
    // Repositions; returns false (and sets error()) on a negative offset.
    bool seek(off_t offset);

    const std::string& error() const { return error_; }

  private:
    // Makes at least one unread byte available; false at EOF or error.
    bool fill();
    // Reads one byte; -1 at EOF/error.
    int get_byte();

    int fd_;
    std::string buf_;
    off_t buf_start_ = 0;
    size_t pos_ = 0;
    std::string error_;
};

} // namespace cqmgr::queuefile
