#include "cqmgr/queuefile/envelope_text.hpp"

#include <cstring>

namespace cqmgr::queuefile {

EnvelopeText::EnvelopeText(const EnvelopeText& o) : len_(o.len_), set_(o.set_) {
    const uint32_t n = o.total();
    if (n) {
        block_ = std::make_unique_for_overwrite<char[]>(n);
        std::memcpy(block_.get(), o.block_.get(), n);
    }
}

EnvelopeText& EnvelopeText::operator=(const EnvelopeText& o) {
    if (this != &o) *this = EnvelopeText(o);
    return *this;
}

void EnvelopeText::set(Field f, std::string_view v) {
    set_ |= 1u << f;
    if (v == get(f)) return;
    rebuild(f, v);
}

void EnvelopeText::reset(Field f) {
    set_ &= ~(1u << f);
    if (len_[f]) rebuild(f, {});
}

void EnvelopeText::rebuild(Field f, std::string_view v) {
    std::array<uint32_t, count> lens = len_;
    lens[f] = static_cast<uint32_t>(v.size());
    uint32_t n = 0;
    for (uint32_t l : lens)
        n += l;
    // `v` may point into the old block: it is freed only after the copy.
    std::unique_ptr<char[]> block;
    if (n) block = std::make_unique_for_overwrite<char[]>(n);
    char* p = block.get();
    for (int i = 0; i < count; ++i) {
        std::string_view text = i == f ? v : get(static_cast<Field>(i));
        if (!text.empty()) std::memcpy(p, text.data(), text.size());
        p += text.size();
    }
    block_ = std::move(block);
    len_ = lens;
}

} // namespace cqmgr::queuefile
