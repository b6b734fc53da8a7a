#include "explain_text.hpp"

#include "control_time.hpp"

namespace cqmgr::qmgr {

// "2026-11-24T06:00:00Z (in 300s)", or "... (300s ago)".
std::string when_text(int64_t t, int64_t now) {
    std::string s = iso_utc(t);
    if (t >= now) return s + " (in " + std::to_string(t - now) + "s)";
    return s + " (" + std::to_string(now - t) + "s ago)";
}

// " until T", or `open` when it ends only when an administrator ends it.
std::string until_words(int64_t until, int64_t now, const std::string& open) {
    return until > 0 ? " until " + when_text(until, now) : open;
}

// Who set an administrator's setting, and when, if known.
std::string set_by(int64_t uid, int64_t since, int64_t now) {
    return " by uid " + std::to_string(uid) + (since > 0 ? " at " + when_text(since, now) : "");
}

// A suspension of `target` in words.
std::string hold_text(const std::string& target, const core::AdminHold& h, int64_t now) {
    return "suspend " + target + set_by(h.uid, h.since, now) +
           until_words(h.until, now, " until cqmgrctl resume") +
           (h.reason.empty() ? "" : ": " + h.reason);
}

// A throttle of `target` in words.
std::string cap_text(const std::string& target, const core::AdminCap& c, int64_t now) {
    return "throttle " + target + set_by(c.uid, c.since, now) +
           until_words(c.until, now, " until cqmgrctl unthrottle");
}

} // namespace cqmgr::qmgr
