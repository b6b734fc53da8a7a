// Incremental, strict and bounded decoder for Postfix attribute lists in any
// of the three formats.  It knows no schema: it returns the list as sent
// (names, values, nested tables) and the typed decoders in messages.hpp and
// the clients check names and numbers.
#pragma once

#include "cqmgr/common/result.hpp"
#include "cqmgr/protocol/attr_list.hpp"
#include "cqmgr/protocol/protocol_error.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::protocol {

// Bounds that keep a hostile or broken peer from making us allocate without
// limit.  Postfix's readers have no bound of their own on a string's length
// (docs/postfix-facts.md §3.4); these are far above anything a real daemon
// sends.  max_table_entries matches Postfix's ATTR_HASH_LIMIT.  Lengths are
// of decoded bytes.
struct AttrLimits {
    size_t max_name = 256;
    size_t max_value = 256 * 1024;
    size_t max_attrs = 4096; // in one list, table entries included
    size_t max_table_entries = 1024;
    size_t max_depth = 1; // Postfix tables never nest
};

class AttrParser {
  public:
    enum class Status { need_more, list, error };

    explicit AttrParser(AttrLimits limits = {}) : AttrParser(AttrFormat::null, limits) {}
    explicit AttrParser(AttrFormat format, AttrLimits limits = {});

    // Consumes bytes from the front of `input` until one list is complete
    // (returns `list`, fills `out`, and leaves the rest of `input` alone),
    // the input is exhausted (`need_more`), or the bytes break the format
    // (`error`, with error() saying what was expected).  After an error the
    // parser stays in error until reset().
    Status parse(std::string_view& input, AttrList& out);

    const std::string& error() const { return error_; }
    // True when a list has been partly read (EOF now would be premature).
    bool mid_list() const { return in_list_; }
    // Forgets any partial list and any error.
    void reset();

  private:
    // One name/value unit as the format delivers it; has_value is false for
    // the list terminator and the table delimiters.
    Status on_record(bool has_value, AttrList& out);
    // Format-specific scanners: consume bytes, call on_record per unit.
    Status scan_null(std::string_view& input, AttrList& out);
    Status scan_line(std::string_view& input, AttrList& out);
    // Ends the current line of the plain/base64 formats.
    Status end_line(AttrList& out);
    // Appends `chunk` to the name or value, enforcing the length limits.
    bool take(std::string& target, std::string_view chunk, size_t limit, const char* what);
    Status fail(std::string why);
    // The container new attributes go to: the list or the open table.
    std::vector<Attr>& container();

    AttrFormat format_;
    AttrLimits limits_;
    AttrList current_;
    size_t depth_ = 0;
    size_t count_ = 0; // attributes in current_, tables included
    std::string name_, value_;
    bool in_value_ = false; // reading the value part of a unit
    bool in_list_ = false;
    std::string error_;
};

// Decodes exactly one complete list from `bytes` (for tests and fixtures).
Result<AttrList, ProtocolError>
decode_one(std::string_view bytes, AttrFormat format = AttrFormat::null, AttrLimits limits = {});

} // namespace cqmgr::protocol
