// A null-format attribute list written straight into its buffer (see
// null_list.hpp).
#include "cqmgr/protocol/null_list.hpp"

#include <algorithm>
#include <charconv>

namespace cqmgr::protocol {

namespace {
constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
// Room made at first: a one-recipient delivery request is under 1 kB.
constexpr size_t first_room = 1024;
} // namespace

NullList::NullList(std::string& out) : out_(out) {
    const size_t used = out_.size();
    out_.resize(used + first_room);
    at_ = out_.data() + used;
    end_ = out_.data() + out_.size();
}

void NullList::grow(size_t n) {
    const size_t used = static_cast<size_t>(at_ - out_.data());
    out_.resize(std::max(out_.size() * 2, used + n));
    at_ = out_.data() + used;
    end_ = out_.data() + out_.size();
}

void NullList::finish() {
    if (!at_) return;
    out_.resize(static_cast<size_t>(at_ - out_.data()));
    at_ = end_ = nullptr;
}

NullList& NullList::number(const char* name, size_t name_size, uint64_t value) {
    char* p = room(name_size + 21);
    std::memcpy(p, name, name_size);
    p = std::to_chars(p + name_size, p + name_size + 20, value).ptr;
    *p = '\0';
    at_ = p + 1;
    return *this;
}

char* NullList::base64(char* p, std::string_view bytes) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
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
    return p;
}

} // namespace cqmgr::protocol
