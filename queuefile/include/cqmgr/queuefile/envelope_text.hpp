// A message's text attributes that only go into delivery requests, notices
// and logs (client, SASL, log_ident, encoding, DSN envelope ID, rewrite
// context) and the rarely set content filter, inspection, redirect and VERP
// records, packed in one heap block.
//
// An active message keeps its envelope for its whole life, and these
// sixteen fields as std::string members cost 544 bytes a message before
// any text; packed, they cost this object and one block holding exactly
// their text.  Setting a field builds a new block, so the queue-file reader
// collects its fields in a Draft and builds the block once per read.
#pragma once

#include <array>
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
    EnvelopeText(EnvelopeText&& o) noexcept
        : block_(std::move(o.block_)), len_(std::exchange(o.len_, {})),
          set_(std::exchange(o.set_, 0)), wide_(std::exchange(o.wide_, false)) {}
    EnvelopeText& operator=(EnvelopeText&& o) noexcept {
        block_ = std::move(o.block_);
        len_ = std::exchange(o.len_, {});
        set_ = std::exchange(o.set_, 0);
        wide_ = std::exchange(o.wide_, false);
        return *this;
    }

    // The field's text; empty when it was never set.
    std::string_view get(Field f) const { return {text() + start(f), len(f)}; }
    // Whether the field was set (to any text, empty included).
    bool has(Field f) const { return (set_ >> f) & 1u; }
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
    using Lengths = std::array<uint32_t, count>;
    static constexpr size_t wide_header = sizeof(Lengths);

    // The field's length, and all sixteen.
    uint32_t len(int f) const { return wide_ ? wide_len(f) : len_[f]; }
    uint32_t wide_len(int f) const;
    Lengths lengths() const;
    // Where the text starts in the block, and where the field's starts in it.
    const char* text() const { return block_.get() + (wide_ ? wide_header : 0); }
    uint32_t start(Field f) const {
        uint32_t at = 0;
        for (int i = 0; i < f; ++i)
            at += len(i);
        return at;
    }
    // The block's size.
    size_t block_size() const;
    // Lays the fields out again with `f` replaced by `v`.
    void rebuild(Field f, std::string_view v);
    // Lays out every field's text anew (the set bits are left as they are);
    // the values may point into the current block.
    using Values = std::array<std::string_view, count>;
    void assign(const Values& values);

    // The text of every field in order; when some field is longer than
    // 65,535 bytes (no real queue file has one), the block starts with all
    // sixteen lengths as 32-bit numbers and len_ is unused (wide_).
    std::unique_ptr<char[]> block_;
    std::array<uint16_t, count> len_{};
    uint32_t set_ = 0;
    bool wide_ = false;
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
