// The decoded form of one Postfix attribute list, shared by all three wire
// formats (null-terminated, plain, base64), plus the number conversions that
// Postfix's readers apply to attribute values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::protocol {

// The three attribute encodings of Postfix (docs/postfix-facts.md §3.1).
//  null:   name NUL value NUL ... NUL          (every service qmgr talks to)
//  plain:  name=value LF ... LF                (attr_clnt users: policy, anvil)
//  base64: b64(name):b64(value) LF ... LF      (no user in 3.7, kept for completeness)
enum class AttrFormat { null, plain, base64 };

// Names a format for messages ("null", "plain", "base64").
const char* format_name(AttrFormat f);

// One attribute, or one nested table (Postfix's "hash" attribute, sent as
// `{` entries `}`).  A table has the name "{", an empty value, and its
// entries in `table`, in wire order.
struct Attr {
    Attr() = default;
    Attr(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
    // An empty nested table.
    static Attr make_table() {
        Attr t("{", "");
        t.is_table = true;
        return t;
    }

    std::string name;
    std::string value;
    std::vector<Attr> table;
    bool is_table = false;
    bool operator==(const Attr&) const = default;
};

// One decoded attribute list, in wire order.  Names may repeat (the delivery
// reply has two `status` attributes, the resolve reply two `flags`).
class AttrList {
  public:
    std::vector<Attr> attrs;

    bool operator==(const AttrList&) const = default;

    // Returns the value of the n-th (0-based) plain attribute called `name`.
    std::optional<std::string_view> get(std::string_view name, int nth = 0) const;

    // Returns the n-th (0-based) nested table, or nullptr.
    const Attr* table(int nth = 0) const;

    // Returns true when the names are exactly `names`, in that order (a
    // nested table counts as one name, "{").
    bool names_are(std::initializer_list<std::string_view> names) const;

    // Describes the list as "a, b, {k}, c" for error messages.
    std::string describe_names() const;
};

// Parses a Postfix unsigned decimal (as `%u%c` / `%lu%c` would, but without
// the leading blanks and sign that sscanf tolerates), then casts to a signed
// value the way C would (so "4294967295" read as int gives -1).
std::optional<int32_t> parse_int(std::string_view text);
std::optional<int64_t> parse_long(std::string_view text);

} // namespace cqmgr::protocol
