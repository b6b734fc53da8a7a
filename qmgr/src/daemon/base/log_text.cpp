#include "log_text.hpp"

namespace cqmgr::log {

namespace {
bool is_continuation(unsigned char c) {
    return c >= 128 && c < 192;
}
} // namespace

void make_printable(std::string& text, size_t from, bool utf8) {
    const size_t n = text.size();
    for (size_t i = from; i < n; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f) continue;
        if (utf8 && c >= 194 && c <= 254 && i + 1 < n &&
            is_continuation(static_cast<unsigned char>(text[i + 1]))) {
            // A lead byte: it and every continuation byte after it stay.
            while (i + 1 < n && is_continuation(static_cast<unsigned char>(text[i + 1])))
                ++i;
            continue;
        }
        text[i] = '?';
    }
}

} // namespace cqmgr::log
