#include "cqmgr/queuefile/record.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace cqmgr::queuefile {

std::string encode_record(char type, std::string_view payload) {
    std::string out(1, type);
    size_t len = payload.size();
    do {
        unsigned char b = len & 0x7f;
        len >>= 7;
        if (len) b |= 0x80;
        out.push_back(static_cast<char>(b));
    } while (len);
    out.append(payload);
    return out;
}

bool RecordStream::fill() {
    if (pos_ < buf_.size()) return true;
    buf_start_ += static_cast<off_t>(buf_.size());
    pos_ = 0;
    buf_.resize(65536);
    ssize_t n;
    do {
        n = ::pread(fd_, buf_.data(), buf_.size(), buf_start_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        error_ = std::string("read error: ") + std::strerror(errno);
        buf_.clear();
        return false;
    }
    buf_.resize(static_cast<size_t>(n));
    return n > 0;
}

int RecordStream::get_byte() {
    if (!fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
}

bool RecordStream::seek(off_t offset) {
    if (offset < 0) {
        error_ = "seek to negative offset";
        return false;
    }
    if (offset >= buf_start_ && offset <= buf_start_ + static_cast<off_t>(buf_.size())) {
        pos_ = static_cast<size_t>(offset - buf_start_);
    } else {
        buf_start_ = offset;
        buf_.clear();
        pos_ = 0;
    }
    return true;
}

int RecordStream::get(std::string& payload) {
    payload.clear();
    off_t start = tell();
    int type = get_byte();
    if (type < 0) return error_.empty() ? rec::eof : rec::error;
    size_t len = 0;
    for (int shift = 0;; shift += 7) {
        if (shift >= 32) {
            error_ = "record length field too long at offset " + std::to_string(start);
            return rec::error;
        }
        int b = get_byte();
        if (b < 0) {
            if (error_.empty()) error_ = "end of file in record header at offset " + std::to_string(start);
            return rec::error;
        }
        len |= static_cast<size_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    if (len > max_record_payload) {
        error_ = "record length " + std::to_string(len) + " at offset " + std::to_string(start) +
                 " exceeds " + std::to_string(max_record_payload);
        return rec::error;
    }
    payload.reserve(len);
    while (payload.size() < len) {
        if (!fill()) {
            if (error_.empty())
                error_ = "end of file in record payload at offset " + std::to_string(start);
            return rec::error;
        }
        size_t take = std::min(len - payload.size(), buf_.size() - pos_);
        payload.append(buf_, pos_, take);
        pos_ += take;
    }
    return type;
}

} // namespace cqmgr::queuefile
