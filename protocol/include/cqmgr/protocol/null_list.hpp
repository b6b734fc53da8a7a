// A null-format attribute list (Postfix's attr_print0: "name\0value\0",
// an empty name ending the list) laid out in one pass.
//
// AttrWriter appends attribute by attribute, each append checking the
// buffer's room and cutting name and value at a NUL.  A delivery request
// has some thirty attributes, and the queue manager writes one per
// delivery: collecting them as views first and writing them with one
// resize and a copy each took most of its cost.  The bytes are the same as
// AttrWriter's null format (the tests hold the two side by side).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cqmgr::protocol {

class NullList {
  public:
    // Appends to `out`; what is collected goes there at flush() (and when
    // the collection is full).
    explicit NullList(std::string& out) : out_(out) {}
    NullList(const NullList&) = delete;
    NullList& operator=(const NullList&) = delete;
    ~NullList() { flush(); }

    // A string attribute, its value cut at its first NUL as a C string
    // would end.  `name` is the caller's constant and holds no NUL; both
    // views must stay valid until the next flush().
    NullList& str(std::string_view name, std::string_view value);
    // An `int` attribute printed as Postfix prints (unsigned) int.
    NullList& num(std::string_view name, int64_t value);
    // A `long` attribute printed as (unsigned long).
    NullList& lnum(std::string_view name, int64_t value);
    // A data attribute: the base64 of `bytes` (at most 192 of them).
    NullList& data(std::string_view name, std::string_view bytes);
    // Ends the current list.
    NullList& end();
    // Writes what was collected.
    void flush();

  private:
    struct Piece {
        std::string_view name;
        std::string_view value;
        bool has_value;
    };
    // Room for `n` bytes of formatted values; flushes first when full.
    char* scratch(size_t n);
    void add(std::string_view name, std::string_view value, bool has_value);

    std::string& out_;
    std::array<Piece, 40> pieces_;
    size_t count_ = 0;
    std::array<char, 640> scratch_;
    size_t used_ = 0;
};

} // namespace cqmgr::protocol
