#include "cqmgr/queuefile/size_record.hpp"

#include "cqmgr/queuefile/c_parse.hpp"

#include <cstdio>

namespace cqmgr::queuefile {

int parse_size_record(std::string_view payload, SizeRecord& out) {
    // sscanf needs a NUL-terminated string; Postfix's payload ends at the first NUL.
    std::string text(c_string(payload));
    return std::sscanf(text.c_str(), "%ld %ld %d %d %ld %d", &out.data_size, &out.data_offset,
                       &out.rcpt_count, &out.qmgr_flags, &out.cont_length, &out.smtputf8);
}

std::string format_size_record(const SizeRecord& s) {
    char buf[6 * 21 + 8];
    std::snprintf(buf, sizeof buf, "%15ld %15ld %15ld %15ld %15ld %15ld", s.data_size,
                  s.data_offset, static_cast<long>(s.rcpt_count), static_cast<long>(s.qmgr_flags),
                  s.cont_length, static_cast<long>(s.smtputf8));
    return buf;
}

} // namespace cqmgr::queuefile
