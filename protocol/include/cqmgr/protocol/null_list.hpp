// A null-format attribute list (Postfix's attr_print0: "name\0value\0",
// an empty name ending the list) written straight into its buffer.
//
// AttrWriter appends attribute by attribute, each append checking the
// buffer's room and cutting name and value at a NUL.  A delivery request
// has some thirty attributes, and the queue manager writes one per
// delivery.  Here the names are the caller's literals, whose length (and
// NUL) the compiler knows, so each is copied with a few moves; the buffer
// is sized once and only its end is checked.  The bytes are the same as
// AttrWriter's null format (the tests hold the two side by side).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cqmgr::protocol {

class NullList {
  public:
    // Appends to `out`; it has its final size once the list is destroyed
    // (or finish() is called).
    explicit NullList(std::string& out);
    NullList(const NullList&) = delete;
    NullList& operator=(const NullList&) = delete;
    ~NullList() { finish(); }

    // A string attribute, its value cut at its first NUL as a C string
    // would end.  `name` is a literal: its NUL goes out with it.
    template <size_t N> NullList& str(const char (&name)[N], std::string_view value) {
        if (!value.empty()) {
            const void* nul = std::memchr(value.data(), '\0', value.size());
            if (nul) value = value.substr(0, static_cast<const char*>(nul) - value.data());
        }
        char* p = room(N + value.size() + 1);
        std::memcpy(p, name, N);
        p += N;
        if (!value.empty()) std::memcpy(p, value.data(), value.size());
        p[value.size()] = '\0';
        at_ = p + value.size() + 1;
        return *this;
    }
    // An `int` attribute printed as Postfix prints (unsigned) int.
    template <size_t N> NullList& num(const char (&name)[N], int64_t value) {
        return number(name, N, static_cast<uint32_t>(value));
    }
    // A `long` attribute printed as (unsigned long).
    template <size_t N> NullList& lnum(const char (&name)[N], int64_t value) {
        return number(name, N, static_cast<uint64_t>(value));
    }
    // A data attribute: the base64 of `bytes`.
    template <size_t N> NullList& data(const char (&name)[N], std::string_view bytes) {
        char* p = room(N + (bytes.size() + 2) / 3 * 4 + 1);
        std::memcpy(p, name, N);
        p = base64(p + N, bytes);
        *p = '\0';
        at_ = p + 1;
        return *this;
    }
    // Bytes written before, as they were (a run of attributes kept from
    // another list).
    NullList& raw(std::string_view bytes) {
        char* p = room(bytes.size());
        if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
        at_ = p + bytes.size();
        return *this;
    }
    // Where the next byte goes, counted from the start of the buffer.
    size_t offset() const { return static_cast<size_t>(at_ - out_.data()); }
    // Ends the current list.
    NullList& end() {
        *room(1) = '\0';
        ++at_;
        return *this;
    }
    // Gives `out` its final size (the destructor does it too).
    void finish();

  private:
    // Makes room for `n` more bytes at at_; returns at_.
    char* room(size_t n) {
        if (static_cast<size_t>(end_ - at_) < n) grow(n);
        return at_;
    }
    void grow(size_t n);
    NullList& number(const char* name, size_t name_size, uint64_t value);
    // Writes the padded base64 of `bytes` at `p`; returns its end.
    static char* base64(char* p, std::string_view bytes);

    std::string& out_;
    char* at_ = nullptr;  // where the next byte goes
    char* end_ = nullptr; // the end of the room made so far
};

} // namespace cqmgr::protocol
