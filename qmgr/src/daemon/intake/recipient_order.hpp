// The order in which a batch of recipients is routed and assigned: by
// domain, then by address, as stock sorts them, so that the recipients of
// one destination group into the same entries and repeated addresses hit
// the resolver's cache one after the other.
#pragma once

#include "cqmgr/queuefile/envelope.hpp"

#include <vector>

namespace cqmgr::qmgr {

// Orders `rcpts` by lower-cased domain (all of an address that has no
// '@'), then by address, keeping the file order of equal ones.
void sort_by_domain(std::vector<queuefile::Recipient>& rcpts);

} // namespace cqmgr::qmgr
