// The order in which qmgr-sim lists messages: text order, except that runs
// of digits compare as numbers, so that "small#2" comes before "small#10".
#pragma once

#include <string_view>

namespace cqmgr::sim {

// True when `a` comes before `b` in natural order (digit runs compared by
// value; equal values with more leading zeros first; the rest byte by byte).
bool natural_less(std::string_view a, std::string_view b);

} // namespace cqmgr::sim
