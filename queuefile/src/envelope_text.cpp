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
    // One walk over the old text, field by field.
    Values values;
    const char* from = text();
    for (int i = 0; i < count; ++i) {
        const uint32_t n = len(i);
        values[i] = i == f ? v : std::string_view(from, n);
        from += n;
    }
    assign(values);
}

void EnvelopeText::assign(const Values& values) {
    Lengths lens;
    size_t n = 0;
    bool wide = false;
    for (int i = 0; i < count; ++i) {
        lens[i] = static_cast<uint32_t>(values[i].size());
        n += lens[i];
        wide = wide || lens[i] > std::numeric_limits<uint16_t>::max();
    }
    if (wide) n += wide_header;
    // The values may point into the old block: it is freed only after the copy.
    std::unique_ptr<char[]> block;
    if (n) block = std::make_unique_for_overwrite<char[]>(n);
    char* p = block.get();
    if (wide) {
        std::memcpy(p, lens.data(), wide_header);
        p += wide_header;
    }
    for (const auto& t : values) {
        if (!t.empty()) std::memcpy(p, t.data(), t.size());
        p += t.size();
    }
    block_ = std::move(block);
    wide_ = wide;
    for (int i = 0; i < count; ++i)
        len_[i] = wide ? 0 : static_cast<uint16_t>(lens[i]);
}

void EnvelopeText::Draft::set(Field f, std::string_view v) {
    // One allocation for a message's fields, rather than one per doubling.
    if (scratch_.empty()) scratch_.reserve(512);
    touched_ |= 1u << f;
    set_ |= 1u << f;
    at_[f] = static_cast<uint32_t>(scratch_.size());
    len_[f] = static_cast<uint32_t>(v.size());
    scratch_.append(v);
}

void EnvelopeText::Draft::reset(Field f) {
    touched_ |= 1u << f;
    set_ &= ~(1u << f);
    len_[f] = 0;
}

void EnvelopeText::Draft::commit(EnvelopeText& into) const {
    if (!touched_) return;
    // The new value of each field: from the draft, or as the base has it.
    Values values;
    uint32_t bits = 0;
    for (int i = 0; i < count; ++i) {
        Field f = static_cast<Field>(i);
        if (touched(f)) {
            values[i] = std::string_view(scratch_).substr(at_[i], len_[i]);
            bits |= set_ & (1u << i);
        } else {
            values[i] = base_.get(f);
            bits |= base_.set_ & (1u << i);
        }
    }
    into.assign(values);
    into.set_ = bits;
}

} // namespace cqmgr::queuefile
