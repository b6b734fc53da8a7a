// The words of the reply rules' log lines (reply_actions.hpp): what an
// action does, its threshold, a span of time.  One place, so that an
// action taken here, restored or heard of from the cluster reads the same.
#pragma once

#include "reply_action.hpp"

#include <cstdint>
#include <string>

namespace cqmgr::qmgr::action_words {

// "3600s" for a span of seconds.
std::string span(int64_t seconds);
// What an action does: "suspend for 3600s", "throttle 2 until 100
// delivered", "rate (a pause of 60s after each delivery) for 7200s",
// "backoff slow (concurrency 2, a pause of 2s after each delivery) for
// 3600s".
std::string doing(const ReplyAction& a);
// " after 3 in 600s", or "" when every match acts.
std::string threshold(const ReplyAction& a);

} // namespace cqmgr::qmgr::action_words
