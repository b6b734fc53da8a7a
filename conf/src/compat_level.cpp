#include "cqmgr/conf/compat_level.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

namespace cqmgr::conf {

namespace {
constexpr int kPatchBits = 10;
constexpr int kMinorBits = 10;
constexpr long kPartMax = (1L << 10) - 1;

// Reads one decimal number like strtol(); `ok` is false when no digits were
// read or it overflowed.  Advances `pos` past what was read.
long read_number(const std::string& s, size_t& pos, bool& ok) {
    const char* start = s.c_str() + pos;
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(start, &end, 10);
    ok = end != start && errno != ERANGE;
    pos += static_cast<size_t>(end - start);
    return v;
}
} // namespace

std::optional<long> parse_compat_level(std::string_view text) {
    std::string s(text);
    size_t pos = 0;
    bool ok = false;
    long major = read_number(s, pos, ok);
    if (!ok || (pos < s.size() && s[pos] != '.') || major < 0 ||
        major > (LONG_MAX >> (kPatchBits + kMinorBits)))
        return std::nullopt;
    long result = major << (kPatchBits + kMinorBits);
    if (pos == s.size()) return result;
    ++pos;
    long minor = read_number(s, pos, ok);
    if (!ok || (pos < s.size() && s[pos] != '.') || minor < 0 || minor > kPartMax)
        return std::nullopt;
    result |= minor << kPatchBits;
    if (pos == s.size()) return result;
    ++pos;
    long patch = read_number(s, pos, ok);
    if (!ok || pos != s.size() || patch < 0 || patch > kPartMax) return std::nullopt;
    return result | patch;
}

} // namespace cqmgr::conf
