// Encoder for Postfix attribute lists in any of the three formats, byte for
// byte as Postfix's attr_print0 / attr_print_plain / attr_print64 write them.
#pragma once

#include "cqmgr/protocol/attr_list.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cqmgr::protocol {

class AttrWriter {
  public:
    explicit AttrWriter(AttrFormat format = AttrFormat::null) : format_(format) {}

    // Appends a string attribute.  Like Postfix (which passes C strings), the
    // name and value are cut at their first NUL.
    AttrWriter& str(std::string_view name, std::string_view value);
    // Appends an `int` attribute, printed as Postfix prints (unsigned) int.
    AttrWriter& num(std::string_view name, int64_t value);
    // Appends a `long` attribute, printed as (unsigned long).
    AttrWriter& lnum(std::string_view name, int64_t value);
    // Appends a data attribute: base64 of all of `bytes` (NULs included).
    AttrWriter& data(std::string_view name, std::string_view bytes);
    // Appends a nested table (Postfix's SEND_ATTR_HASH): `{`, the entries as
    // string attributes, `}`.  Postfix sends a hash table's entries in its
    // own iteration order; here they go out in the order given.
    AttrWriter& table(const std::vector<std::pair<std::string, std::string>>& entries);
    // Appends every attribute (and table) of a decoded list, without ending
    // the list.  Values go out as decoded; in the base64 format NULs survive,
    // in the others a value is cut at its first NUL.
    AttrWriter& attrs(const AttrList& list);
    // Ends the current list.
    AttrWriter& end();

    // Makes room for `n` bytes in all, so that a caller who knows about how
    // long its list is pays one allocation instead of one per doubling.
    AttrWriter& reserve(size_t n) {
        buf_.reserve(n);
        return *this;
    }

    const std::string& bytes() const { return buf_; }
    std::string take() { return std::move(buf_); }

  private:
    // Appends one name/value pair in the writer's format; `keep_nul` keeps
    // NULs in the value where the format can carry them (base64).
    void put(std::string_view name, std::string_view value, bool keep_nul);
    // Appends a table delimiter ("{" or "}") in the writer's format.
    void put_delimiter(std::string_view which);

    AttrFormat format_;
    std::string buf_;
};

// Encodes one complete list (attributes, tables, terminator).
std::string encode_list(const AttrList& list, AttrFormat format = AttrFormat::null);

} // namespace cqmgr::protocol
