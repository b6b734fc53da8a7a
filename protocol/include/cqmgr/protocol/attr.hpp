// Postfix's null-terminated attribute encoding ("attr_print0"), used on every
// local socket qmgr talks to: delivery agents, trivial-rewrite, bounce/defer/
// trace, verify and flush.  A list is `name NUL value NUL ...` followed by one
// extra NUL.  Numbers travel as unsigned decimal text, data as base64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::protocol {

struct Attr {
    std::string name;
    std::string value;
    bool operator==(const Attr&) const = default;
};

// One decoded attribute list, in wire order.  Names may repeat (the delivery
// reply has two `status` attributes, the resolve reply two `flags`).
class AttrList {
  public:
    std::vector<Attr> attrs;

    // Returns the value of the n-th (0-based) attribute called `name`.
    std::optional<std::string_view> get(std::string_view name, int nth = 0) const;

    // Returns true when the names are exactly `names`, in that order.
    bool names_are(std::initializer_list<std::string_view> names) const;

    // Describes the list as "a, b, c" for error messages.
    std::string describe_names() const;
};

// Builds one or more attribute lists in a byte buffer.
class AttrWriter {
  public:
    // Appends a string attribute.  Like Postfix, a value is cut at its first NUL.
    AttrWriter& str(std::string_view name, std::string_view value);
    // Appends an `int` attribute, printed as Postfix prints (unsigned) int.
    AttrWriter& num(std::string_view name, int64_t value);
    // Appends a `long` attribute, printed as (unsigned long).
    AttrWriter& lnum(std::string_view name, int64_t value);
    // Appends a data attribute (base64 of `bytes`).
    AttrWriter& data(std::string_view name, std::string_view bytes);
    // Ends the current list.
    AttrWriter& end();

    const std::string& bytes() const { return buf_; }
    std::string take() { return std::move(buf_); }

  private:
    std::string buf_;
};

// Bounds that keep a hostile or broken peer from making us allocate without
// limit.  Postfix itself has no explicit bound; these are far above anything
// a real daemon sends.
struct AttrLimits {
    size_t max_name = 256;
    size_t max_value = 256 * 1024;
    size_t max_attrs = 4096;
};

// Incremental decoder: feed it bytes as they arrive, take complete lists out.
class AttrParser {
  public:
    enum class Status { need_more, list, error };

    explicit AttrParser(AttrLimits limits = {}) : limits_(limits) {}

    // Consumes bytes from the front of `input` until one list is complete
    // (returns `list` and fills `out`), the input is exhausted (`need_more`),
    // or the bytes break the format (`error`, with `error()` saying why).
    Status parse(std::string_view& input, AttrList& out);

    const std::string& error() const { return error_; }
    // True when a list has been partly read (EOF now would be premature).
    bool mid_list() const { return in_list_; }

  private:
    AttrLimits limits_;
    AttrList current_;
    std::string name_, value_;
    bool in_value_ = false;
    bool in_list_ = false;
    std::string error_;
};

// Decodes exactly one complete list from `bytes` (for tests and fixtures).
std::optional<AttrList> decode_one(std::string_view bytes, std::string* error = nullptr);

// Parses a Postfix unsigned decimal (as `%u%c` / `%lu%c` would), then casts to
// a signed value the way C would (so "4294967295" read as int gives -1).
std::optional<int32_t> parse_int(std::string_view text);
std::optional<int64_t> parse_long(std::string_view text);

} // namespace cqmgr::protocol
