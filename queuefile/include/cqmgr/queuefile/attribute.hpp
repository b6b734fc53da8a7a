// Named attributes ('A' records, "name=value") and the names that stand for
// record types of their own (dsn_orig_rcpt is an 'o' record, and so on).
#pragma once

#include <string_view>

namespace cqmgr::queuefile {

// Splits "name=value" the way Postfix's split_nameval() does: white space
// around the name and the value is dropped, the name ends at white space or
// '='.  Returns nullptr on success, else Postfix's reason ("missing attribute
// name", "missing '=' after attribute name").  `text` should already be cut
// at its first NUL (c_string()).
const char* split_attribute(std::string_view text, std::string_view& name, std::string_view& value);

// The record type an attribute name stands for ('o', 'n', 'i', '<', 'c'),
// or 0 for names that are just attributes.
int attribute_record_type(std::string_view name);

} // namespace cqmgr::queuefile
