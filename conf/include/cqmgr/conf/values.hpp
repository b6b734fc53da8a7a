// The value syntax Postfix daemons apply when they read a typed parameter
// (docs/postfix-facts.md §9.1).  Each parser returns nullopt where the
// Postfix daemon would stop with a fatal error; the callers add the bounds
// checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::conf {

// An int: optional leading white space and sign, decimal digits, nothing
// after them, within 32 bits ("bad numerical configuration" otherwise).
std::optional<int64_t> parse_int(std::string_view value);

// A long (sizes such as message_size_limit): as parse_int with 64 bits.
std::optional<int64_t> parse_long(std::string_view value);

// A time in seconds: a non-negative int followed by an optional unit
// s, m, h, d or w (lower case only).  A bare number has `default_unit`.
// Postfix looks only at the first character after the digits, so "10sec"
// is 10 seconds; "10 s" and "10S" are bad.  The result must fit in an int.
std::optional<int64_t> parse_time(std::string_view value, char default_unit);

// "yes" or "no" in any case; anything else (including true/false) is bad.
std::optional<bool> parse_bool(std::string_view value);

// Splits on commas, blanks, tabs, CR and LF, dropping empty items (Postfix
// argv_split with CHARS_COMMA_SP), as for hash_queue_names and
// defer_transports.
std::vector<std::string> split_list(std::string_view text);

// The next item of `s` from `pos` on (which it advances): `separators`
// end an item except inside {...}, as Postfix's mystrtokq() with braces
// splits master.cf arguments and match lists.  nullopt at the end.
std::optional<std::string> next_braced_item(std::string_view s, size_t& pos,
                                            std::string_view separators);

// The host name syntax myhostname and mydomain must satisfy: labels of
// letters, digits, '_' and inner '-' of at most 63 characters, no empty
// label, not all-numeric, at most 255 characters.
bool valid_hostname(std::string_view name);
// Why `name` is not a valid host name, in the words of Postfix's warning
// ("valid_hostname: misplaced hyphen: NAME"), or nullopt when it is.
std::optional<std::string> hostname_problem(std::string_view name);

} // namespace cqmgr::conf
