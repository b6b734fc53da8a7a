// One recipient as the queue-file reader reads it and the scheduler carries
// it in its entries: what a delivery request, a deferral and the logs need,
// and where its R record is in the queue file so that it can be marked
// done.  The core never looks inside; it groups recipients into entries and
// hands them back to its driver.
//
// Compact, because a queue manager may hold hundreds of thousands of them
// (qmgr_message_recipient_limit): 24 bytes plus one heap block for all its
// text.  The block holds the address and a NUL; the original recipient
// follows only when it is neither empty nor the address itself (the
// common case is "same", stored once); the DSN original recipient follows
// only when there is one.  When either follows, their two lengths sit
// between the address's NUL and them.  Accessors hand out views into the
// block, valid until the recipient is changed or destroyed.
//
// No dependencies, and below both of its users: the queue-file library
// reads its recipients into this class and the core carries the same
// objects (queuefile::Recipient and core::Recipient are aliases), so
// neither needs anything of the other.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

namespace cqmgr {

class Recipient {
  public:
    Recipient() = default;
    // `offset`: the file offset of the R record's type byte.
    Recipient(int64_t offset, std::string_view address, std::string_view orig_rcpt,
              std::string_view dsn_orcpt, int notify_flags);
    Recipient(const Recipient& o);
    Recipient(Recipient&& o) noexcept
        : offset_(o.offset_), text_(std::exchange(o.text_, nullptr)),
          address_len_(std::exchange(o.address_len_, 0)), notify_(o.notify_),
          orig_(std::exchange(o.orig_, Orig::empty)), has_dsn_(std::exchange(o.has_dsn_, false)) {}
    Recipient& operator=(const Recipient& o);
    Recipient& operator=(Recipient&& o) noexcept {
        if (this == &o) return *this;
        delete[] text_;
        offset_ = o.offset_;
        text_ = std::exchange(o.text_, nullptr);
        address_len_ = std::exchange(o.address_len_, 0);
        notify_ = o.notify_;
        orig_ = std::exchange(o.orig_, Orig::empty);
        has_dsn_ = std::exchange(o.has_dsn_, false);
        return *this;
    }
    ~Recipient() { delete[] text_; }

    int64_t offset() const { return offset_; }
    std::string_view address() const { return {text_, address_len_}; }
    // The address NUL-terminated (for the static probes).
    const char* address_c_str() const { return text_ ? text_ : ""; }
    // The original recipient: "" when the file had none.
    std::string_view orig_rcpt() const {
        switch (orig_) {
        case Orig::same:
            return address();
        case Orig::stored:
            return {text_ + tail_at() + tail_header, tail_len(0)};
        default:
            return {};
        }
    }
    std::string_view dsn_orcpt() const {
        if (!has_dsn_) return {};
        size_t at = tail_at() + tail_header + tail_len(0); // 0 unless stored
        return {text_ + at, tail_len(1)};
    }
    int notify_flags() const { return notify_; }

    // Replaces the address (the resolver's canonical form, a redirect); the
    // original recipient and the DSN original recipient stay as they were.
    void set_address(std::string_view address);

    bool operator==(const Recipient& o) const {
        return offset_ == o.offset_ && notify_ == o.notify_ && address() == o.address() &&
               orig_rcpt() == o.orig_rcpt() && dsn_orcpt() == o.dsn_orcpt();
    }

  private:
    enum class Orig : uint8_t { empty, same, stored };
    // The two lengths (original recipient, DSN original recipient) after
    // the address, when either is stored.
    static constexpr uint32_t tail_header = 2 * sizeof(uint32_t);

    // Where the tail starts in the block: after the address and its NUL.
    size_t tail_at() const { return size_t{address_len_} + 1; }
    uint32_t tail_len(int i) const;
    bool has_tail() const { return orig_ == Orig::stored || has_dsn_; }
    size_t block_size() const;
    void build(std::string_view address, std::string_view orig_rcpt, std::string_view dsn_orcpt);

    int64_t offset_ = 0;
    char* text_ = nullptr; // null while all three are empty
    uint32_t address_len_ = 0;
    uint16_t notify_ = 0;
    Orig orig_ = Orig::empty;
    bool has_dsn_ = false;
};

} // namespace cqmgr
