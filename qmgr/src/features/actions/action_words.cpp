// The words of the reply rules' log lines (see action_words.hpp).
#include "action_words.hpp"

namespace cqmgr::qmgr::action_words {

std::string span(int64_t seconds) {
    return std::to_string(seconds) + "s";
}

std::string doing(const ReplyAction& a) {
    using K = ReplyAction::Kind;
    std::string out = action_kind_name(a.kind);
    if (a.kind == K::throttle) out += " " + std::to_string(a.concurrency);
    const std::string pause = "a pause of " + span(a.pause_seconds()) + " after each delivery";
    if (a.kind == K::rate) out += " (" + pause + ")";
    if (a.kind == K::backoff) {
        std::string cap = a.concurrency > 0 ? "concurrency " + std::to_string(a.concurrency) : "";
        if (a.rate_count > 0) cap += (cap.empty() ? "" : ", ") + pause;
        out += " " + a.profile + " (" + cap + ")";
    }
    if (a.duration_ms > 0) out += " for " + span(a.duration_seconds());
    if (a.until_delivered > 0) out += " until " + std::to_string(a.until_delivered) + " delivered";
    return out;
}

std::string threshold(const ReplyAction& a) {
    if (a.after_count <= 1) return "";
    return " after " + std::to_string(a.after_count) + " in " +
           span((a.after_period_ms + 999) / 1000);
}

} // namespace cqmgr::qmgr::action_words
