#include "cqmgr/queuefile/envelope_text.hpp"

#include <cstring>
#include <limits>

namespace cqmgr::queuefile {

EnvelopeText::EnvelopeText(const EnvelopeText& o) : len_(o.len_), set_(o.set_), wide_(o.wide_) {
    const size_t n = o.block_size();
    if (n) {
        block_ = std::make_unique_for_overwrite<char[]>(n);
        std::memcpy(block_.get(), o.block_.get(), n);
    }
}

EnvelopeText& EnvelopeText::operator=(const EnvelopeText& o) {
    if (this != &o) *this = EnvelopeText(o);
    return *this;
}

uint32_t EnvelopeText::wide_len(int f) const {
    uint32_t n;
    std::memcpy(&n, block_.get() + f * sizeof n, sizeof n);
    return n;
}

EnvelopeText::Lengths EnvelopeText::lengths() const {
    Lengths l;
    if (wide_)
        std::memcpy(l.data(), block_.get(), wide_header);
    else
        for (int i = 0; i < count; ++i)
            l[i] = len_[i];
    return l;
}

size_t EnvelopeText::block_size() const {
    size_t n = wide_ ? wide_header : 0;
    for (uint32_t l : lengths())
        n += l;
    return n;
}

void EnvelopeText::set(Field f, std::string_view v) {
    set_ |= 1u << f;
    if (v == get(f)) return;
    rebuild(f, v);
}

void EnvelopeText::reset(Field f) {
    set_ &= ~(1u << f);
    if (len(f)) rebuild(f, {});
}

void EnvelopeText::rebuild(Field f, std::string_view v) {
    const Lengths old = lengths();
    Lengths lens = old;
    lens[f] = static_cast<uint32_t>(v.size());
    size_t n = 0;
    bool wide = false;
    for (uint32_t l : lens) {
        n += l;
        wide = wide || l > std::numeric_limits<uint16_t>::max();
    }
    if (wide) n += wide_header;
    // `v` may point into the old block: it is freed only after the copy.
    std::unique_ptr<char[]> block;
    if (n) block = std::make_unique_for_overwrite<char[]>(n);
    char* p = block.get();
    if (wide) {
        std::memcpy(p, lens.data(), wide_header);
        p += wide_header;
    }
    // One walk over the old text, field by field.
    const char* from = text();
    for (int i = 0; i < count; ++i) {
        std::string_view t = i == f ? v : std::string_view(from, old[i]);
        if (!t.empty()) std::memcpy(p, t.data(), t.size());
        p += t.size();
        from += old[i];
    }
    block_ = std::move(block);
    wide_ = wide;
    for (int i = 0; i < count; ++i)
        len_[i] = wide ? 0 : static_cast<uint16_t>(lens[i]);
}

} // namespace cqmgr::queuefile
