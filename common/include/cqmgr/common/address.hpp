// An envelope address split into its local part and its domain, the one
// place where every layer (routing, logging, sorting, the resolve cache,
// fast flush) finds where one ends and the other begins.
#pragma once

#include <string_view>

namespace cqmgr {

// The two sides of an address; views into the address it was made from.
struct AddressParts {
    std::string_view local;  // all before the last '@', or all of it without one
    std::string_view domain; // all after the last '@'; "" without one
    bool has_at = false;     // whether there is an '@' at all
};

// Splits `address` at its last '@', as Postfix does: a quoted local part
// may itself hold an '@' ("a@b"@example.com), a domain cannot.  No '@' is
// a local part alone; a trailing '@' gives an empty domain.  Inline: it
// runs for each recipient of each batch.
inline AddressParts split_address(std::string_view address) {
    const size_t at = address.rfind('@');
    if (at == std::string_view::npos) return {address, {}, false};
    return {address.substr(0, at), address.substr(at + 1), true};
}

} // namespace cqmgr
