// Test helper: builds queue files record by record with a correct SIZE
// record, and hands them to the reader through unlinked temporary files.
#pragma once

#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/record.hpp"
#include "cqmgr/queuefile/size_record.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace qftest {

using cqmgr::queuefile::encode_record;

// A "%15ld" payload, as pointer and warning records carry.
inline std::string num15(long v) {
    char b[32];
    std::snprintf(b, sizeof b, "%15ld", v);
    return b;
}

// Envelope, content and extracted segments; build() adds C, M, X and E.
struct QfBuilder {
    std::string envelope = encode_record('T', "1700000000 5") + encode_record('S', "s@x");
    std::string content = encode_record('N', "Subject: x") + encode_record('N', "") +
                          encode_record('N', "body");
    std::string extracted;
    std::string heap; // after E, reachable through pointers only
    int rcpts = 0;
    int flags = cqmgr::queuefile::read_flag::mixed_rcpt_other; // SIZE record field 4
    long cont_length = 0;
    int smtputf8 = 0;

    // Offset where the envelope segment (after the 97-byte SIZE record) starts.
    static constexpr long envelope_start = 97;
    long data_offset() const { return envelope_start + static_cast<long>(envelope.size()) + 2; }
    long xtra_offset() const { return data_offset() + static_cast<long>(content.size()); }
    long extracted_start() const { return xtra_offset() + 2; }
    long heap_start() const { return extracted_start() + static_cast<long>(extracted.size()) + 2; }

    std::string size_payload() const {
        cqmgr::queuefile::SizeRecord s;
        s.data_size = static_cast<long>(content.size());
        s.data_offset = data_offset();
        s.rcpt_count = rcpts;
        s.qmgr_flags = flags;
        s.cont_length = cont_length ? cont_length : static_cast<long>(content.size());
        s.smtputf8 = smtputf8;
        return cqmgr::queuefile::format_size_record(s);
    }
    std::string build() const {
        return encode_record('C', size_payload()) + envelope + encode_record('M', "") + content +
               encode_record('X', "") + extracted + encode_record('E', "") + heap;
    }
};

// Writes `bytes` to an unlinked temporary file; returns a descriptor open
// for reading and writing.
inline int temp_fd(const std::string& bytes) {
    char name[] = "/tmp/cqmgr-qf-XXXXXX";
    int fd = ::mkstemp(name);
    if (fd < 0) std::abort();
    ::unlink(name);
    if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) std::abort();
    return fd;
}

// Reads the whole file behind `fd`.
inline std::string read_all(int fd) {
    std::string out;
    char buf[4096];
    off_t at = 0;
    for (ssize_t n; (n = ::pread(fd, buf, sizeof buf, at)) > 0; at += n) out.append(buf, n);
    return out;
}

} // namespace qftest
