// Postfix compatibility levels ("0", "2", "3.6", "3.6.1") as one number, so
// that the `<level`, `==level`, ... operators in parameter defaults such as
// ${{$compatibility_level} <level {2} ? {...} : {...}} compare them properly.
#pragma once

#include <optional>
#include <string_view>

namespace cqmgr::conf {

// Converts "major[.minor[.patch]]" (minor and patch 0..1023) to an ordered
// number; nullopt for malformed text (Postfix: "malformed compatibility
// level syntax").
std::optional<long> parse_compat_level(std::string_view text);

} // namespace cqmgr::conf
