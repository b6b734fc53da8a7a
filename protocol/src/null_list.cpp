// A null-format attribute list laid out in one pass (see null_list.hpp).
#include "cqmgr/protocol/null_list.hpp"

#include <charconv>
#include <cstring>

namespace cqmgr::protocol {

namespace {
constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Writes the padded base64 of `bytes` at `p`; returns its length.
size_t base64_into(char* p, std::string_view bytes) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
    char* const start = p;
    size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        // A request's time block is mostly zeros.
        if ((b[i] | b[i + 1] | b[i + 2]) == 0) {
            std::memcpy(p, "AAAA", 4);
            p += 4;
            continue;
        }
        uint32_t v = (uint32_t{b[i]} << 16) | (uint32_t{b[i + 1]} << 8) | b[i + 2];
        p[0] = alphabet[(v >> 18) & 63];
        p[1] = alphabet[(v >> 12) & 63];
        p[2] = alphabet[(v >> 6) & 63];
        p[3] = alphabet[v & 63];
        p += 4;
    }
    const size_t rest = bytes.size() - i;
    if (rest > 0) {
        uint32_t v = uint32_t{b[i]} << 16;
        if (rest == 2) v |= uint32_t{b[i + 1]} << 8;
        p[0] = alphabet[(v >> 18) & 63];
        p[1] = alphabet[(v >> 12) & 63];
        p[2] = rest == 2 ? alphabet[(v >> 6) & 63] : '=';
        p[3] = '=';
        p += 4;
    }
    return static_cast<size_t>(p - start);
}
} // namespace

char* NullList::scratch(size_t n) {
    // A flush empties the scratch: it must not come between this and the
    // add() of the piece that points here, so room for the piece is made
    // now too.
    if (used_ + n > scratch_.size() || count_ == pieces_.size()) flush();
    char* p = scratch_.data() + used_;
    used_ += n;
    return p;
}

void NullList::add(std::string_view name, std::string_view value, bool has_value) {
    if (count_ == pieces_.size()) flush();
    pieces_[count_++] = {name, value, has_value};
}

NullList& NullList::str(std::string_view name, std::string_view value) {
    if (!value.empty()) {
        const void* nul = std::memchr(value.data(), '\0', value.size());
        if (nul) value = value.substr(0, static_cast<const char*>(nul) - value.data());
    }
    add(name, value, true);
    return *this;
}

NullList& NullList::num(std::string_view name, int64_t value) {
    char* p = scratch(10);
    auto r = std::to_chars(p, p + 10, static_cast<uint32_t>(value));
    used_ -= static_cast<size_t>(p + 10 - r.ptr);
    add(name, std::string_view(p, static_cast<size_t>(r.ptr - p)), true);
    return *this;
}

NullList& NullList::lnum(std::string_view name, int64_t value) {
    char* p = scratch(20);
    auto r = std::to_chars(p, p + 20, static_cast<uint64_t>(value));
    used_ -= static_cast<size_t>(p + 20 - r.ptr);
    add(name, std::string_view(p, static_cast<size_t>(r.ptr - p)), true);
    return *this;
}

NullList& NullList::data(std::string_view name, std::string_view bytes) {
    if (bytes.size() > 192) bytes = bytes.substr(0, 192);
    const size_t n = (bytes.size() + 2) / 3 * 4;
    char* p = scratch(n);
    base64_into(p, bytes);
    add(name, std::string_view(p, n), true);
    return *this;
}

NullList& NullList::end() {
    add({}, {}, false);
    return *this;
}

void NullList::flush() {
    size_t total = 0;
    for (size_t i = 0; i < count_; ++i)
        total += pieces_[i].name.size() + 1 +
                 (pieces_[i].has_value ? pieces_[i].value.size() + 1 : 0);
    // The NULs come with the resize.
    const size_t at = out_.size();
    out_.resize(at + total);
    char* p = out_.data() + at;
    for (size_t i = 0; i < count_; ++i) {
        const Piece& x = pieces_[i];
        if (!x.name.empty()) std::memcpy(p, x.name.data(), x.name.size());
        p += x.name.size() + 1;
        if (!x.has_value) continue;
        if (!x.value.empty()) std::memcpy(p, x.value.data(), x.value.size());
        p += x.value.size() + 1;
    }
    count_ = 0;
    used_ = 0;
}

} // namespace cqmgr::protocol
