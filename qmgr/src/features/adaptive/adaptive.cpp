#include "adaptive.hpp"

#include "defer_log.hpp"
#include "entry_records.hpp"
#include "log.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

std::string receiver_words(const std::string& text) {
    for (const char* marker : {" refused to talk to me: ", " said: "})
        if (auto at = text.find(marker); text.rfind("host ", 0) == 0 && at != std::string::npos)
            return text.substr(at + std::string(marker).size());
    return text;
}

AdaptiveSettings adaptive_settings(const conf::QmgrParams& p) {
    AdaptiveSettings s;
    s.probe_deliveries = p.cqmgr_adaptive_probe_deliveries;
    s.probe_time_ms = p.cqmgr_adaptive_probe_time * 1000;
    s.forget_time_ms = p.cqmgr_adaptive_forget_time * 1000;
    s.rate_margin = static_cast<int>(p.cqmgr_adaptive_rate_margin);
    s.rate_window_ms = p.cqmgr_adaptive_rate_window * 1000;
    return s;
}

namespace {

// The groups' settings: those of main.cf, without a slow start.
AdaptiveSettings group_settings(const conf::QmgrParams& p) {
    AdaptiveSettings s = adaptive_settings(p);
    s.slow_start = false;
    return s;
}

} // namespace

AdaptiveLimits::AdaptiveLimits(const conf::QmgrParams& params, std::optional<RegexTable> rules,
                               core::Scheduler& sched, DeferLogPath defer_log_path)
    : transports_(params.cqmgr_adaptive_limit_transports.begin(),
                  params.cqmgr_adaptive_limit_transports.end()),
      classifier_(std::move(rules), [](const std::string& w) { log::warn(w); }),
      policy_(adaptive_settings(params)),
      window_(params.cqmgr_adaptive_rate_model == "window"
                  ? std::make_unique<AdaptiveWindow>(window_settings(params))
                  : nullptr),
      group_policy_(group_settings(params)), sched_(sched),
      defer_log_path_(std::move(defer_log_path)),
      forget_seconds_(params.cqmgr_adaptive_forget_time) {}

int64_t AdaptiveLimits::defer_log_mark(const std::string& id) const {
    return file_size(defer_log_path_(id));
}

std::optional<std::pair<ReplyClass, core::Dsn>>
AdaptiveLimits::defer_log_class(const core::Entry& e, int64_t mark) const {
    std::optional<std::pair<ReplyClass, core::Dsn>> best;
    // One budget for the delivery: a receiver's texts made to hit the rules'
    // limits cost a few limits' work, however many recipients it refused.
    MatchBudget budget;
    for (const DeferRecord& rec : entry_records(e, defer_log_path_(e.message->id), mark)) {
        // The enum lists the classes from the most limiting down.
        ReplyClass c = classifier_.classify(rec.status, rec.reason, budget);
        if (!best || c < best->first) best = {{c, core::Dsn{rec.status, rec.reason}}};
    }
    return best;
}

void AdaptiveLimits::use_provider_scope(ProviderScope* scope, GroupApplier apply) {
    scope_ = scope;
    group_applier_ = std::move(apply);
}

core::AdminTarget AdaptiveLimits::target_of(const core::Queue& q) const {
    if (scope_)
        if (const ProviderScope::Group* g = scope_->group(q)) return g->target;
    return core::AdminTarget{q.transport->name, q.name};
}

void AdaptiveLimits::started(const core::Entry& e, int busy, int64_t now_ms) {
    const core::Queue& q = *e.queue;
    core::AdminTarget target = target_of(q);
    policy_of(target).started(target.text(), busy, q.transport->cfg.dest_concurrency_limit, now_ms);
    if (windowed(target))
        window_step(target, window_->started(target.text(), now_ms), nullptr, now_ms);
}

void AdaptiveLimits::delivery_started(DeliveryEvent& ev) {
    const core::Entry& e = *ev.entry;
    if (!covers(*e.queue->transport)) return;
    ev.defer_mark = defer_log_mark(e.message->id);
    ev.started_ms = ev.clock->now_ms();
    int busy = ev.busy_at_start;
    if (ProviderScope::Group* g = scope_ ? scope_->group(*e.queue) : nullptr)
        busy = ev.group_busy_at_start = ++g->busy;
    started(e, busy, ev.started_ms);
}

void AdaptiveLimits::delivery_ended(DeliveryEvent& ev) {
    const core::Entry& e = *ev.entry;
    if (!covers(*e.queue->transport)) return;
    int busy = ev.busy_at_start;
    if (ProviderScope::Group* g = scope_ ? scope_->group(*e.queue) : nullptr) {
        // A member now: counted in its group since it started or joined.
        g->busy--;
        if (ev.group_busy_at_start > 0) busy = ev.group_busy_at_start;
    }
    ev.result.unseen =
        !delivered(e, busy, ev.result, ev.clock->now_ms(), ev.defer_mark, ev.started_ms);
}

bool AdaptiveLimits::delivered(const core::Entry& e, int busy_at_start,
                               const core::DeliveryResult& r, int64_t now_ms, int64_t mark,
                               int64_t started_ms) {
    if (r.kind != core::DeliveryResult::Kind::replied) return true; // no word, may have been seen
    const core::Queue& q = *e.queue;
    std::optional<ReplyClass> cls;
    core::Dsn words = r.hop;
    if (!r.hop.reason.empty()) {
        cls = classifier_.classify(r.hop.status, r.hop.reason);
    } else if (r.status != 0) {
        // Recipients deferred one by one: their words are in the defer log.
        auto found = defer_log_class(e, mark);
        if (!found) return !r.hop.status.empty(); // without a word: nothing taken in hand
        cls = found->first;
        words = found->second;
    }
    core::AdminTarget target = target_of(q);
    std::string key = target.text();
    Cause cause;
    if (cls) cause = Cause{*cls, words.status, words.reason, now_ms / 1000};
    // Under the window model a rate limit teaches the window, not the pace.
    const bool windows = windowed(target);
    auto pace_cls = windows && cls == ReplyClass::rate_limit ? ReplyClass::other : cls;
    if (auto change =
            policy_of(target).delivery(key, pace_cls, busy_at_start, now_ms, started_ms)) {
        targets_[key] = target;
        apply(*change, target, cls ? &cause : nullptr, now_ms);
    }
    if (windows)
        window_step(target, window_->delivery(key, cls, started_ms, now_ms), cls ? &cause : nullptr,
                    now_ms);
    return true;
}

void AdaptiveLimits::sweep(int64_t now_ms) {
    if (now_ms - last_sweep_ms_ < 1000) return;
    last_sweep_ms_ = now_ms;
    for (AdaptivePolicy* policy : {&policy_, &group_policy_})
        for (const auto& change : policy->sweep(now_ms)) {
            auto it = targets_.find(change.dest);
            if (it == targets_.end()) continue;
            core::AdminTarget target = it->second; // apply() may erase it
            apply(change, target, nullptr, now_ms);
        }
    if (window_)
        for (const auto& change : window_->sweep(now_ms))
            if (auto it = targets_.find(change.dest); it != targets_.end()) {
                core::AdminTarget target = it->second; // window_step() may erase it
                window_step(target, AdaptiveWindow::Step{change, true}, nullptr, now_ms);
            }
}

bool AdaptiveLimits::restore(const core::AdminTarget& target, const core::LearnedLimit& limit,
                             int64_t learned_at, int64_t now_ms, std::optional<Cause> cause) {
    // A group's limit is taken up only with the provider scope on now.
    bool group = !ProviderScope::provider_in(target).empty();
    // A window's quota is taken up only with the window model on now.
    int quota = windowed(target) ? limit.quota : 0;
    core::LearnedLimit pace{limit.concurrency, limit.rate_delay};
    if ((!pace.any() && quota == 0) || !transports_.contains(target.transport) ||
        now_ms - learned_at * 1000 >= forget_seconds_ * 1000 || (group && !group_applier_))
        return false;
    std::string key = target.text();
    if (pace.any()) policy_of(target).restore(key, pace, learned_at * 1000);
    if (quota > 0) window_->restore(key, quota, learned_at * 1000);
    targets_[key] = target;
    std::string what;
    auto add = [&](const std::string& part) { what += (what.empty() ? "" : ", ") + part; };
    if (pace.concurrency > 0) add("concurrency limit " + std::to_string(pace.concurrency));
    if (pace.rate_delay > 0) add("rate delay " + std::to_string(pace.rate_delay) + "s");
    if (quota > 0) add("quota " + quota_text(quota));
    std::string from;
    if (cause) {
        from = " from \"" + receiver_words(cause->text) + "\"";
        causes_[target] = std::move(*cause);
    }
    log::info("cqmgr: " + key + ": learned " + what + " kept from the state store (learned " +
              std::to_string(std::max<int64_t>(now_ms / 1000 - learned_at, 0)) + "s ago" + from +
              ")");
    if (group)
        group_applier_(target.transport, ProviderScope::provider_in(target), pace);
    else
        push(target, now_ms);
    return true;
}

void AdaptiveLimits::apply(const AdaptivePolicy::Change& change, const core::AdminTarget& target,
                           const Cause* cause, int64_t now_ms) {
    using Why = AdaptivePolicy::Change::Why;
    const auto& before = change.before;
    const auto& after = change.after;
    std::string what;
    auto add = [&](const std::string& part) { what += (what.empty() ? "" : ", ") + part; };
    if (change.why == Why::ramp) {
        // A slow start's steps are not news: one a delivery, on every
        // destination.
        if (log::verbose())
            log::debug("cqmgr: " + target.text() + ": slow start at concurrency " +
                       std::to_string(after.concurrency));
    } else if (change.why == Why::forget) {
        add("learned limits forgotten after " + std::to_string(forget_seconds_) +
            "s without a strike");
        if (after.any()) add("slow start at concurrency " + std::to_string(after.concurrency));
    } else {
        std::string verb = change.why == Why::probe ? "probing" : "learned";
        // The same numbers: a strike that ended a slow start at its cap.
        bool same = after == before;
        // A pause means one at a time: its concurrency of 0 is no limit
        // of its own to report ("concurrency limit 0" read as a stop).
        bool paused = after.rate_delay > 0 && after.concurrency == 0;
        if (!paused && (after.concurrency != before.concurrency || (same && after.concurrency > 0)))
            add(verb + " concurrency limit " + std::to_string(after.concurrency));
        if (after.rate_delay != before.rate_delay || (same && after.rate_delay > 0))
            add(after.rate_delay > 0
                    ? verb + " rate delay " + std::to_string(after.rate_delay) + "s"
                    : verb + " without a rate delay");
    }
    if (cause) what += " from \"" + receiver_words(cause->text) + "\"";
    if (!what.empty()) log::info("cqmgr: " + target.text() + ": " + what);
    // The window's quota keeps its target and reply.
    const bool quota = windowed(target) && window_->quota(target.text()) > 0;
    if (!after.any() && !quota) targets_.erase(target.text());
    if (!quota && (!after.any() || change.why == Why::forget || change.why == Why::ramp))
        causes_.erase(target);
    else if (cause)
        causes_[target] = *cause;
    if (std::string provider = ProviderScope::provider_in(target); !provider.empty()) {
        if (group_applier_) group_applier_(target.transport, provider, after);
    } else {
        push(target, now_ms);
    }
    // A slow start's cap is no learned limit: restored after a restart it
    // would hold the queue at a count nothing refused.  The store keeps
    // what strikes and probes set, and nothing while a slow start runs
    // (beside a window's quota, which its steps do not change).
    if (change.why != Why::ramp || !quota) tell(target);
}

bool AdaptiveLimits::slow_start(const core::Queue& q) const {
    core::AdminTarget target = target_of(q);
    return policy_of(target).ramping(target.text());
}

const AdaptiveLimits::Cause* AdaptiveLimits::cause(const core::Queue& q) const {
    auto it = causes_.find(target_of(q));
    return it == causes_.end() ? nullptr : &it->second;
}

} // namespace cqmgr::qmgr
