// The reply rules' provider scope (`suspend provider ...`) from the
// providers' membership: an action on one member destination covers every
// member of its provider on that transport, as they are when it acts.
#pragma once

#include "providers.hpp"
#include "reply_actions.hpp"

namespace cqmgr::qmgr {

// `scopes` with its provider and provider_queues taken from `providers`
// (which outlives them); the sender group is left as it is.
ReplyActions::Scopes with_provider_scopes(ReplyActions::Scopes scopes, const Providers& providers);

} // namespace cqmgr::qmgr
