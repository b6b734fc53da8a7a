#include "cqmgr/queuefile/error.hpp"

#include <cstdio>

namespace cqmgr::queuefile {

const char* error_kind_name(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::io: return "io";
    case ErrorKind::truncated_header: return "truncated_header";
    case ErrorKind::length_overflow: return "length_overflow";
    case ErrorKind::length_limit: return "length_limit";
    case ErrorKind::truncated_payload: return "truncated_payload";
    case ErrorKind::bad_pointer: return "bad_pointer";
    case ErrorKind::pointer_loop: return "pointer_loop";
    case ErrorKind::bad_seek: return "bad_seek";
    case ErrorKind::unexpected_record: return "unexpected_record";
    case ErrorKind::bad_attribute: return "bad_attribute";
    case ErrorKind::bad_size: return "bad_size";
    case ErrorKind::bad_size_flags: return "bad_size_flags";
    case ErrorKind::weird_size: return "weird_size";
    case ErrorKind::old_style_scan: return "old_style_scan";
    case ErrorKind::missing_end: return "missing_end";
    case ErrorKind::missing_time: return "missing_time";
    case ErrorKind::missing_sender: return "missing_sender";
    case ErrorKind::missing_size: return "missing_size";
    case ErrorKind::wrong_record: return "wrong_record";
    case ErrorKind::bad_argument: return "bad_argument";
    }
    return "unknown";
}

std::string FileError::message() const {
    std::string m = "queue file " + (path.empty() ? std::string("(unnamed)") : path);
    if (offset >= 0) m += ": byte offset " + std::to_string(offset);
    m += ": expected " + expected;
    if (!found.empty()) m += "; found " + found;
    return m;
}

std::string escape_bytes(std::string_view bytes, size_t max) {
    std::string out;
    size_t n = 0;
    for (unsigned char c : bytes) {
        if (n++ == max) {
            out += "...";
            break;
        }
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c >= 0x20 && c < 0x7f) {
                out.push_back(static_cast<char>(c));
            } else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02X", c);
                out += buf;
            }
        }
    }
    return out;
}

} // namespace cqmgr::queuefile
