// The adaptive limits' window model in the daemon (adaptive.hpp): what the
// scheduler and the state store get of a queue's learned limit when the
// pace policy and the window model both learn for it, and the log lines
// of the window's quota.
#include "adaptive.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

WindowSettings window_settings(const conf::QmgrParams& p) {
    WindowSettings s;
    // The receiver's unit, and the second a counter that resets only once
    // its start plus the unit lies before the current second adds.
    s.window_ms = (p.cqmgr_adaptive_rate_window + 1) * 1000;
    s.probe_deliveries = p.cqmgr_adaptive_probe_deliveries;
    s.probe_time_ms = p.cqmgr_adaptive_probe_time * 1000;
    s.forget_time_ms = p.cqmgr_adaptive_forget_time * 1000;
    return s;
}

std::string AdaptiveLimits::quota_text(int quota) const {
    return std::to_string(quota) + " deliveries per " +
           std::to_string(window_ ? window_->window_seconds() : 0) + "s window";
}

core::LearnedLimit AdaptiveLimits::core_limit(const core::AdminTarget& target,
                                              int64_t now_ms) const {
    core::LearnedLimit l = policy_of(target).limit(target.text());
    if (!windowed(target)) return l;
    core::LearnedLimit w = window_->core_part(target.text(), now_ms);
    l.quota = w.quota;
    l.window = w.window;
    // A hold the scheduler's clock has already seen end is none.
    if (w.held_until > sched_.now()) l.held_until = w.held_until;
    if (w.concurrency > 0 && (l.concurrency == 0 || w.concurrency < l.concurrency))
        l.concurrency = w.concurrency;
    return l;
}

void AdaptiveLimits::push(const core::AdminTarget& target, int64_t now_ms) {
    sched_.set_limit(target, core::LimitChange::learned(core_limit(target, now_ms)));
}

core::LearnedLimit AdaptiveLimits::stored_limit(const core::AdminTarget& target) const {
    const std::string key = target.text();
    const AdaptivePolicy& policy = policy_of(target);
    core::LearnedLimit l = policy.ramping(key) ? core::LearnedLimit{} : policy.limit(key);
    if (windowed(target))
        if (int quota = window_->quota(key); quota > 0) {
            l.quota = quota;
            l.window = window_->window_seconds();
        }
    return l;
}

void AdaptiveLimits::tell(const core::AdminTarget& target) {
    if (!observer_) return;
    core::LearnedLimit l = stored_limit(target);
    auto it = causes_.find(target);
    observer_(target, l, l.any() && it != causes_.end() ? &it->second : nullptr);
}

void AdaptiveLimits::window_step(const core::AdminTarget& target, const AdaptiveWindow::Step& step,
                                 const Cause* cause, int64_t now_ms) {
    using Why = AdaptiveWindow::Change::Why;
    const std::string key = target.text();
    if (const auto& c = step.change) {
        std::string what = c->why == Why::forget
                               ? "learned quota forgotten after " +
                                     std::to_string(forget_seconds_) + "s without a strike"
                               : std::string(c->why == Why::probe ? "probing" : "learned") +
                                     " quota " + quota_text(c->after);
        if (cause) what += " from \"" + receiver_words(cause->text) + "\"";
        log::info("cqmgr: " + key + ": " + what);
        const bool pace = policy_of(target).limit(key).any();
        if (c->after > 0 || pace)
            targets_[key] = target;
        else
            targets_.erase(key);
        if (c->after > 0 && cause)
            causes_[target] = *cause;
        else if (c->after == 0 && !pace)
            causes_.erase(target);
        tell(target);
    }
    if (!step.change && !step.core) return;
    push(target, now_ms);
    if (log::verbose()) {
        core::LearnedLimit w = window_->core_part(key, now_ms);
        log::debug("cqmgr: " + key + ": window " +
                   (w.held_until > 0    ? "held until " + std::to_string(w.held_until)
                    : w.concurrency > 0 ? "open, its first delivery alone"
                                        : "open"));
    }
}

} // namespace cqmgr::qmgr
