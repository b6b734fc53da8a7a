#include "cqmgr/queuefile/c_parse.hpp"

#include <limits>

namespace cqmgr::queuefile {

std::string_view c_string(std::string_view payload) {
    auto nul = payload.find('\0');
    return nul == std::string_view::npos ? payload : payload.substr(0, nul);
}

int64_t c_atol(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && c_isspace(s[i]))
        ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    // Accumulate as a negative number so that INT64_MIN is reachable.
    constexpr int64_t lo = std::numeric_limits<int64_t>::min();
    int64_t v = 0;
    bool overflow = false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        int d = s[i] - '0';
        if (overflow) continue;
        if (v < lo / 10 || v * 10 < lo + d)
            overflow = true;
        else
            v = v * 10 - d;
    }
    if (overflow) return neg ? lo : std::numeric_limits<int64_t>::max();
    if (neg) return v;
    return v == lo ? std::numeric_limits<int64_t>::max() : -v;
}

int c_atoi(std::string_view s) {
    return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(c_atol(s))));
}

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

int64_t parse_pointer(std::string_view payload) {
    size_t i = 0;
    while (i < payload.size() && c_isspace(payload[i]))
        ++i;
    constexpr int64_t hi = std::numeric_limits<int64_t>::max();
    int64_t v = 0;
    for (; i < payload.size(); ++i) {
        char c = payload[i];
        if (c < '0' || c > '9') return -1;
        int d = c - '0';
        if (v > hi / 10 || v * 10 > hi - d) return -1;
        v = v * 10 + d;
    }
    return v;
}

} // namespace cqmgr::queuefile
