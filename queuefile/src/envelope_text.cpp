#include "cqmgr/queuefile/envelope_text.hpp"

#include <bit>
#include <cstring>
#include <limits>

namespace cqmgr::queuefile {

static_assert(EnvelopeText::count < 31, "the set bits and the wide bit share 32 bits");

EnvelopeText::EnvelopeText(const EnvelopeText& o) {
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

uint32_t EnvelopeText::word(size_t at) const {
    uint32_t n;
    std::memcpy(&n, block_.get() + at, sizeof n);
    return n;
}

uint32_t EnvelopeText::length_at(size_t k) const {
    if (text_bits() & wide_bit) return word(header + k * sizeof(uint32_t));
    uint16_t n;
    std::memcpy(&n, block_.get() + header + k * sizeof n, sizeof n);
    return n;
}

uint32_t EnvelopeText::len(int f) const {
    const uint32_t bits = text_bits();
    if (!((bits >> f) & 1u)) return 0;
    return length_at(static_cast<size_t>(std::popcount(bits & ((1u << f) - 1))));
}

size_t EnvelopeText::text_start() const {
    const uint32_t bits = text_bits();
    const size_t width = bits & wide_bit ? sizeof(uint32_t) : sizeof(uint16_t);
    return header + static_cast<size_t>(std::popcount(bits & ~wide_bit)) * width;
}

std::string_view EnvelopeText::get(Field f) const {
    const uint32_t bits = text_bits();
    if (!((bits >> f) & 1u)) return {};
    // The field's text follows that of the fields with text before it.
    const size_t k = static_cast<size_t>(std::popcount(bits & ((1u << f) - 1)));
    size_t at = text_start();
    for (size_t j = 0; j < k; ++j)
        at += length_at(j);
    return {block_.get() + at, length_at(k)};
}

size_t EnvelopeText::block_size() const {
    if (!block_) return 0;
    const size_t fields = static_cast<size_t>(std::popcount(text_bits() & ~wide_bit));
    size_t n = text_start();
    for (size_t j = 0; j < fields; ++j)
        n += length_at(j);
    return n;
}

void EnvelopeText::set(Field f, std::string_view v) {
    const uint32_t set = set_bits() | (1u << f);
    if (v == get(f) && set == set_bits()) return;
    rebuild(f, v, set);
}

void EnvelopeText::reset(Field f) {
    if (!has(f) && len(f) == 0) return;
    rebuild(f, {}, set_bits() & ~(1u << f));
}

void EnvelopeText::rebuild(Field f, std::string_view v, uint32_t set) {
    Values values;
    for (int i = 0; i < count; ++i)
        values[i] = i == f ? v : get(static_cast<Field>(i));
    assign(values, set);
}

void EnvelopeText::assign(const Values& values, uint32_t set) {
    uint32_t fields = 0;
    size_t text = 0;
    bool wide = false;
    for (int i = 0; i < count; ++i) {
        if (values[i].empty()) continue;
        fields |= 1u << i;
        text += values[i].size();
        wide = wide || values[i].size() > std::numeric_limits<uint16_t>::max();
    }
    if (!set && !fields) {
        block_.reset();
        return;
    }
    const size_t width = wide ? sizeof(uint32_t) : sizeof(uint16_t);
    const size_t n = header + static_cast<size_t>(std::popcount(fields)) * width + text;
    // The values may point into the old block: it is freed only after the copy.
    auto block = std::make_unique_for_overwrite<char[]>(n);
    char* p = block.get();
    const uint32_t text_bits = fields | (wide ? wide_bit : 0);
    std::memcpy(p, &set, sizeof set);
    std::memcpy(p + sizeof set, &text_bits, sizeof text_bits);
    p += header;
    for (const auto& t : values) {
        if (t.empty()) continue;
        if (wide) {
            const auto l = static_cast<uint32_t>(t.size());
            std::memcpy(p, &l, sizeof l);
        } else {
            const auto l = static_cast<uint16_t>(t.size());
            std::memcpy(p, &l, sizeof l);
        }
        p += width;
    }
    for (const auto& t : values) {
        if (t.empty()) continue;
        std::memcpy(p, t.data(), t.size());
        p += t.size();
    }
    block_ = std::move(block);
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

std::optional<std::string_view> EnvelopeText::Draft::find(Field f) const {
    if (!touched(f)) return base_.find(f);
    if (!((set_ >> f) & 1u)) return std::nullopt;
    return std::string_view(scratch_).substr(at_[f], len_[f]);
}

void EnvelopeText::Draft::commit(EnvelopeText& into) const {
    if (!touched_) return;
    // The new value of each field: from the draft, or as the base has it.
    Values values;
    uint32_t bits = 0;
    const uint32_t base_set = base_.set_bits();
    for (int i = 0; i < count; ++i) {
        Field f = static_cast<Field>(i);
        if (touched(f)) {
            values[i] = std::string_view(scratch_).substr(at_[i], len_[i]);
            bits |= set_ & (1u << i);
        } else {
            values[i] = base_.get(f);
            bits |= base_set & (1u << i);
        }
    }
    into.assign(values, bits);
}

} // namespace cqmgr::queuefile
