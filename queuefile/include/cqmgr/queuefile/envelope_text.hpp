// A message's text attributes: the sender, and those that only go into
// delivery requests, notices and logs (client, SASL, log_ident, encoding,
// DSN envelope ID, rewrite context) and the rarely set content filter,
// inspection, redirect and VERP records, packed in one heap block.
//
// An active message keeps its envelope for its whole life, and these
// seventeen fields as std::string members cost 576 bytes a message before
// any text.  Packed, the object is one pointer, and its block holds which
// fields are set, the lengths of those that are not empty, and their text:
// a one-recipient message in core is mostly its envelope, and the active
// queue may hold 20,000 of them.  Setting a field builds a new block, so
// the queue-file reader collects its fields in a Draft and builds the
// block once per read.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cqmgr::queuefile {

class EnvelopeText {
  public:
    enum Field : uint8_t {
        sender,
        encoding,
        dsn_envid,
        client_name,
        client_addr,
        client_port,
        client_proto,
        client_helo,
        sasl_method,
        sasl_username,
        sasl_sender,
        log_ident,
        rewrite_context,
        filter,
        inspect,
        redirect,
        verp_delims,
        count
    };

    EnvelopeText() = default;
    EnvelopeText(const EnvelopeText& o);
    EnvelopeText& operator=(const EnvelopeText& o);
    // A moved-from object is left with every field empty and unset.
    EnvelopeText(EnvelopeText&&) noexcept = default;
    EnvelopeText& operator=(EnvelopeText&&) noexcept = default;

    // The field's text; empty when it was never set.
    std::string_view get(Field f) const;
    // Whether the field was set (to any text, empty included).
    bool has(Field f) const { return (set_bits() >> f) & 1u; }
    // The field's text when it was set, none otherwise.
    std::optional<std::string_view> find(Field f) const {
        if (!has(f)) return std::nullopt;
        return get(f);
    }
    // Sets the field to `v` (which may point into this object's block).
    void set(Field f, std::string_view v);
    // Unsets the field.
    void reset(Field f);

    class Draft;

  private:
    // The block: the set bits (32 bits), the bits of the fields with text
    // (32 bits; the top one says the lengths are wide), then the length of
    // each field with text in field order, 16 bits each, or 32 bits when
    // some field is longer than 65,535 bytes (no real queue file has one),
    // then their text in the same order.  No block: nothing set.
    static constexpr uint32_t wide_bit = 1u << 31;
    static constexpr size_t header = 2 * sizeof(uint32_t);
    uint32_t word(size_t at) const;
    uint32_t set_bits() const { return block_ ? word(0) : 0; }
    uint32_t text_bits() const { return block_ ? word(sizeof(uint32_t)) : 0; }
    // The length of the k-th field with text; the field's length (0 when
    // it has none); where the text starts in the block.
    uint32_t length_at(size_t k) const;
    uint32_t len(int f) const;
    size_t text_start() const;
    // The block's size.
    size_t block_size() const;
    // Lays the fields out again with `f` replaced by `v` and the set bits
    // `set`.
    void rebuild(Field f, std::string_view v, uint32_t set);
    // Lays out every field's text anew with the set bits `set`; the values
    // may point into the current block.
    using Values = std::array<std::string_view, count>;
    void assign(const Values& values, uint32_t set);

    std::unique_ptr<char[]> block_;
};

// Changes to an EnvelopeText, collected and then applied in one new block.
// A queue file sets ten or so fields, one record at a time; setting each
// on the EnvelopeText itself would build ten blocks.
class EnvelopeText::Draft {
  public:
    // Starts from `base`'s fields; `base` must outlive the draft.
    explicit Draft(const EnvelopeText& base) : base_(base) {}

    // As on EnvelopeText; the text is copied, `v` need not outlive the call.
    void set(Field f, std::string_view v);
    void reset(Field f);
    bool has(Field f) const { return touched(f) ? (set_ >> f) & 1u : base_.has(f); }
    // The field's text as the draft has it, when it is set; valid until
    // the draft's next set().
    std::optional<std::string_view> find(Field f) const;

    // Applies the changes to `into` (usually the base): one block for all.
    void commit(EnvelopeText& into) const;

  private:
    bool touched(Field f) const { return (touched_ >> f) & 1u; }

    const EnvelopeText& base_;
    std::string scratch_; // the text of every value set here, in order of setting
    std::array<uint32_t, count> at_{}, len_{};
    uint32_t touched_ = 0, set_ = 0;
};

} // namespace cqmgr::queuefile
