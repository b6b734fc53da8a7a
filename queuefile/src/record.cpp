#include "cqmgr/queuefile/record.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace cqmgr::queuefile {

namespace {
// Size of one pread(2); enough for a few hundred envelope records.
constexpr size_t read_chunk = 65536;

// Read buffers of streams that ended, for the next streams of the thread.
// Every message read makes a stream, and a 64 kB allocation and free per
// message is off the allocator's fast path.  A few are kept, since
// streams can be alive at the same time.
constexpr size_t spare_limit = 4;
thread_local std::vector<std::unique_ptr<char[]>> spare_buffers;

// "'S' (sender)" for messages.
std::string type_label(int type) {
    std::string s = "'";
    if (type >= 0x20 && type < 0x7f)
        s.push_back(static_cast<char>(type));
    else
        s += escape_bytes(std::string(1, static_cast<char>(type)));
    return s + "'";
}
} // namespace

std::string encode_length(size_t len) {
    std::string out;
    do {
        unsigned char b = len & 0x7f;
        len >>= 7;
        if (len) b |= 0x80;
        out.push_back(static_cast<char>(b));
    } while (len);
    return out;
}

std::string encode_record(char type, std::string_view payload) {
    std::string out(1, type);
    out += encode_length(payload.size());
    out.append(payload);
    return out;
}

int RecordStream::fail(ErrorKind kind, off_t offset, std::string expected, std::string found) {
    failed_ = true;
    failure_ =
        FileError{kind, path_, static_cast<int64_t>(offset), std::move(expected), std::move(found)};
    return rec::error;
}

RecordStream::~RecordStream() {
    if (buf_ && spare_buffers.size() < spare_limit) spare_buffers.push_back(std::move(buf_));
}

bool RecordStream::fill() {
    if (pos_ < buf_len_) return true;
    if (io_error_) return false;
    if (!buf_) {
        if (spare_buffers.empty()) {
            buf_ = std::make_unique_for_overwrite<char[]>(read_chunk);
        } else {
            buf_ = std::move(spare_buffers.back());
            spare_buffers.pop_back();
        }
    }
    buf_start_ += static_cast<off_t>(buf_len_);
    pos_ = 0;
    buf_len_ = 0;
    ssize_t n;
    do {
        n = ::pread(fd_, buf_.get(), read_chunk, buf_start_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        int err = errno;
        io_error_ = true;
        fail(ErrorKind::io, buf_start_, "readable data",
             std::string("read error: ") + std::strerror(err));
        return false;
    }
    buf_len_ = static_cast<size_t>(n);
    return n > 0;
}

int RecordStream::get_byte() {
    if (!fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
}

bool RecordStream::seek(off_t offset) {
    if (offset < 0) {
        fail(ErrorKind::bad_seek, tell(), "a seek to a non-negative offset",
             "offset " + std::to_string(offset));
        return false;
    }
    io_error_ = false;
    if (offset >= buf_start_ && offset - buf_start_ <= static_cast<off_t>(buf_len_)) {
        pos_ = static_cast<size_t>(offset - buf_start_);
    } else {
        buf_start_ = offset;
        buf_len_ = 0;
        pos_ = 0;
    }
    return true;
}

int RecordStream::get(std::string& payload) {
    payload.clear();
    failed_ = false;
    const off_t start = tell();
    record_start_ = start;
    int type = get_byte();
    record_type_ = type;
    record_length_ = 0;
    if (type < 0) return io_error_ ? rec::error : rec::eof;
    size_t len = 0;
    int nbytes = 0;
    for (int shift = 0;; shift += 7) {
        if (shift >= 32)
            return fail(ErrorKind::length_overflow, start,
                        "a length field of at most 5 bytes in record type " + type_label(type),
                        "a 6th continuation byte");
        int b = get_byte();
        if (b < 0) {
            if (io_error_) return rec::error;
            return fail(ErrorKind::truncated_header, start,
                        "length byte " + std::to_string(nbytes + 1) + " of record type " +
                            type_label(type),
                        "end of file");
        }
        ++nbytes;
        len |= static_cast<size_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    record_length_ = len;
    if (len > max_record_payload)
        return fail(ErrorKind::length_limit, start,
                    "a record length of at most " + std::to_string(max_record_payload) +
                        " in record type " + type_label(type),
                    "length " + std::to_string(len));
    // Grow with the data actually read, never by the declared length alone.
    payload.reserve(std::min(len, read_chunk));
    while (payload.size() < len) {
        if (!fill()) {
            if (io_error_) return rec::error;
            return fail(ErrorKind::truncated_payload, start,
                        std::to_string(len) + " payload bytes in record type " + type_label(type),
                        "end of file after " + std::to_string(payload.size()));
        }
        size_t take = std::min(len - payload.size(), buf_len_ - pos_);
        payload.append(buf_.get() + pos_, take);
        pos_ += take;
    }
    return type;
}

} // namespace cqmgr::queuefile
