#include "cqmgr/queuefile/size_record.hpp"

#include "cqmgr/queuefile/c_parse.hpp"

#include <cstdint>
#include <cstdio>

namespace cqmgr::queuefile {

namespace {
// Reads the numbers of a SIZE payload one by one with the rules of
// sscanf's "%ld" and "%d" in the C locale: white space skipped, an optional
// sign, decimal digits (a value beyond the range of long saturates, as
// strtol does; an int field keeps the low 32 bits of that long, as glibc
// stores it).  Parsed in place, without a copy of the payload: the queue
// manager reads one SIZE record per message.
class SizeFields {
  public:
    explicit SizeFields(std::string_view text) : s_(text) {}

    // The next number: 1 when converted, 0 when what follows is not a
    // number (sscanf's matching failure), -1 at the end (input failure).
    int next(long& v) {
        while (i_ < s_.size() && c_isspace(s_[i_]))
            ++i_;
        if (i_ == s_.size()) return -1;
        const size_t start = i_;
        if (s_[i_] == '+' || s_[i_] == '-') ++i_;
        const size_t digits = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9')
            ++i_;
        if (i_ == digits) return 0;
        v = static_cast<long>(c_atol(s_.substr(start, i_ - start)));
        return 1;
    }
    int next(int& v) {
        long l = 0;
        int r = next(l);
        if (r == 1) v = static_cast<int>(static_cast<uint32_t>(static_cast<unsigned long>(l)));
        return r;
    }

  private:
    std::string_view s_;
    size_t i_ = 0;
};
} // namespace

int parse_size_record(std::string_view payload, SizeRecord& out) {
    // Postfix's payload ends at the first NUL.
    SizeFields in(c_string(payload));
    int done = 0;
    // Each field in turn; the count stops at the first that fails, and
    // nothing at all (only white space) counts as sscanf's EOF.
    auto field = [&](auto& v) {
        int r = in.next(v);
        if (r == 1)
            ++done;
        else if (r < 0 && done == 0)
            done = -1;
        return r == 1;
    };
    field(out.data_size) && field(out.data_offset) && field(out.rcpt_count) &&
        field(out.qmgr_flags) && field(out.cont_length) && field(out.smtputf8);
    return done;
}

std::string format_size_record(const SizeRecord& s) {
    char buf[6 * 21 + 8];
    std::snprintf(buf, sizeof buf, "%15ld %15ld %15ld %15ld %15ld %15ld", s.data_size,
                  s.data_offset, static_cast<long>(s.rcpt_count), static_cast<long>(s.qmgr_flags),
                  s.cont_length, static_cast<long>(s.smtputf8));
    return buf;
}

} // namespace cqmgr::queuefile
