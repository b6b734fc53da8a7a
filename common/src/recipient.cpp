#include "cqmgr/common/recipient.hpp"

#include <cstring>
#include <utility>

namespace cqmgr {

Recipient::Recipient(int64_t offset, std::string_view address, std::string_view orig_rcpt,
                     std::string_view dsn_orcpt, int notify_flags)
    : offset_(offset), notify_(static_cast<uint16_t>(notify_flags)) {
    build(address, orig_rcpt, dsn_orcpt);
}

Recipient::Recipient(const Recipient& o)
    : offset_(o.offset_), address_len_(o.address_len_), notify_(o.notify_), orig_(o.orig_),
      has_dsn_(o.has_dsn_) {
    if (o.text_) {
        size_t n = o.block_size();
        text_ = new char[n];
        std::memcpy(text_, o.text_, n);
    }
}

Recipient& Recipient::operator=(const Recipient& o) {
    if (this != &o) *this = Recipient(o);
    return *this;
}

void Recipient::set_address(std::string_view address) {
    if (address == this->address()) return;
    // The views (and `address`, maybe) point into the old block: it goes
    // only once the new one is built.
    char* old = text_;
    build(address, orig_rcpt(), dsn_orcpt());
    delete[] old;
}

uint32_t Recipient::tail_len(int i) const {
    uint32_t n;
    std::memcpy(&n, text_ + tail_at() + i * sizeof(uint32_t), sizeof n);
    return n;
}

size_t Recipient::block_size() const {
    size_t n = tail_at();
    if (has_tail()) n += tail_header + tail_len(0) + tail_len(1);
    return n;
}

// Lays out a fresh block for the three strings (text_ is not owned here:
// the caller has freed or kept the old one).
void Recipient::build(std::string_view address, std::string_view orig_rcpt,
                      std::string_view dsn_orcpt) {
    address_len_ = static_cast<uint32_t>(address.size());
    orig_ = orig_rcpt.empty() ? Orig::empty : orig_rcpt == address ? Orig::same : Orig::stored;
    has_dsn_ = !dsn_orcpt.empty();
    uint32_t lens[2] = {orig_ == Orig::stored ? static_cast<uint32_t>(orig_rcpt.size()) : 0,
                        static_cast<uint32_t>(dsn_orcpt.size())};
    if (address.empty() && !has_tail()) {
        text_ = nullptr;
        return;
    }
    text_ = new char[tail_at() + (has_tail() ? tail_header + lens[0] + lens[1] : 0)];
    char* p = text_;
    if (!address.empty()) std::memcpy(p, address.data(), address.size());
    p += address.size();
    *p++ = '\0';
    if (!has_tail()) return;
    std::memcpy(p, lens, tail_header);
    p += tail_header;
    if (lens[0]) std::memcpy(p, orig_rcpt.data(), lens[0]);
    p += lens[0];
    if (lens[1]) std::memcpy(p, dsn_orcpt.data(), lens[1]);
}

} // namespace cqmgr
