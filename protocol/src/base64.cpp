#include "cqmgr/protocol/base64.hpp"

#include <array>
#include <cstdint>

namespace cqmgr::protocol {

namespace {
constexpr std::string_view alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Maps a base64 character to its 6-bit value, or -1.
int value_of(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}
} // namespace

std::string base64_encode(std::string_view bytes) {
    std::string out;
    base64_append(out, bytes);
    return out;
}

void base64_append(std::string& out, std::string_view bytes) {
    // Sized once and written in place: a request encodes every attribute,
    // and appending a byte at a time cost more than the encoding.
    const size_t at = out.size();
    out.resize(at + (bytes.size() + 2) / 3 * 4);
    char* p = out.data() + at;
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        uint32_t v = (uint32_t{b[i]} << 16) | (uint32_t{b[i + 1]} << 8) | b[i + 2];
        *p++ = alphabet[(v >> 18) & 63];
        *p++ = alphabet[(v >> 12) & 63];
        *p++ = alphabet[(v >> 6) & 63];
        *p++ = alphabet[v & 63];
    }
    const size_t rest = bytes.size() - i;
    if (rest == 0) return;
    uint32_t v = uint32_t{b[i]} << 16;
    if (rest == 2) v |= uint32_t{b[i + 1]} << 8;
    *p++ = alphabet[(v >> 18) & 63];
    *p++ = alphabet[(v >> 12) & 63];
    *p++ = rest == 2 ? alphabet[(v >> 6) & 63] : '=';
    *p = '=';
}

std::optional<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        std::array<int, 4> v{};
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            unsigned char c = text[i + k];
            if (c == '=') {
                // Padding is only legal in the last quantum, at its end.
                if (i + 4 != text.size() || k < 2) return std::nullopt;
                ++pad;
                v[k] = 0;
            } else {
                if (pad) return std::nullopt;
                v[k] = value_of(c);
                if (v[k] < 0) return std::nullopt;
            }
        }
        uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
        out += char((n >> 16) & 0xff);
        if (pad < 2) out += char((n >> 8) & 0xff);
        if (pad < 1) out += char(n & 0xff);
    }
    return out;
}

} // namespace cqmgr::protocol
