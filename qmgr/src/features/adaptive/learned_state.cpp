// Learned limits to and from the destination state store (learned_state.hpp).
#include "learned_state.hpp"

namespace cqmgr::qmgr {

void keep_learned(AdaptiveLimits& adaptive, DestinationState& state) {
    adaptive.observe([&state](const core::AdminTarget& target, const core::LearnedLimit& limit,
                              const AdaptiveLimits::Cause* cause) {
        DestinationState::LearnedReply reply;
        if (cause) reply = {reply_class_name(cause->cls), cause->status, cause->text};
        state.learned_changed(target, limit, reply);
    });
}

DestinationState::LearnedRestore restore_learned(AdaptiveLimits* adaptive, const WallClock& clock) {
    if (!adaptive) return {};
    return [adaptive, &clock](const core::AdminTarget& target, const core::LearnedLimit& limit,
                              int64_t learned_at, const DestinationState::LearnedReply& reply) {
        // The reply is kept only if its class is still one we know.
        std::optional<AdaptiveLimits::Cause> cause;
        if (auto cls = reply_class_from_name(reply.cls))
            cause = AdaptiveLimits::Cause{*cls, reply.status, reply.text, learned_at};
        return adaptive->restore(target, limit, learned_at, clock.now_ms(), std::move(cause));
    };
}

} // namespace cqmgr::qmgr
