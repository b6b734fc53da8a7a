// Adaptive limits from the receivers' replies (cqmgr_adaptive_limit_
// transports; docs/admin-guide.md, "Adaptive limits"): each delivery's
// outcome on a listed transport is classified (reply_class.hpp) and fed to
// the policy (adaptive_policy.hpp); what the policy learns is logged and
// handed to the scheduler as the queue's learned limit.
//
// Two ways a receiver's words reach the queue manager: the hop status an
// agent reports for a destination problem (for SMTP, a refusal at the
// greeting or the HELO/EHLO, such as a 421 for too many connections), and,
// when recipients were deferred one by one (a 4xx to MAIL, RCPT or DATA;
// the reply then has no text), the records the agent had appended to the
// message's defer log during the delivery (defer_log.hpp).
//
// With the provider scope (cqmgr_adaptive_limit_scope = provider, and a
// ProviderScope given), a queue that is a provider's member learns with
// its group: the policy's destination is the group (transport and
// "provider NAME"), its deliveries in flight are the group's, and what is
// learned goes to the group's applier (the providers' gate: features.cpp)
// instead of the queue's learned bound.  A group has no slow start: it
// would gate every member of a provider that never refused anything.
//
// With cqmgr_adaptive_rate_model = window, a queue's rate-limit replies
// teach the window model (adaptive_window.hpp) instead of the pace: the
// scheduler gets the policy's limit with the window's part (its quota,
// and its hold while the quota is spent) as one learned limit
// (adaptive_windows.cpp).  A provider's group keeps the pace.
#pragma once

#include "adaptive_policy.hpp"
#include "adaptive_window.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "delivery_observer.hpp"
#include "provider_scope.hpp"
#include "reply_class.hpp"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace cqmgr::qmgr {

class AdaptiveLimits : public DeliveryObserver {
  public:
    // Why a destination has its limit: the reply that struck last.
    struct Cause {
        ReplyClass cls = ReplyClass::other;
        std::string status;
        std::string text;
        int64_t when = 0; // seconds
    };

    // Where the defer log of a message (by queue ID) is.
    using DeferLogPath = std::function<std::string(const std::string& id)>;
    // Told of every change of a queue's learned limit (empty: forgotten),
    // with the reply that taught it (nullptr: none known).
    using Observer = std::function<void(const core::AdminTarget& target,
                                        const core::LearnedLimit& limit, const Cause* cause)>;

    // `rules`: the admin's table, read before the jail (or none).
    AdaptiveLimits(const conf::QmgrParams& params, std::optional<RegexTable> rules,
                   core::Scheduler& sched, DeferLogPath defer_log_path);

    // Whether transport `t` learns limits.
    bool covers(const core::Transport& t) const { return transports_.count(t.name) > 0; }
    // Where the defer log of message `id` ends now: taken when a request
    // is sent, so that delivered() reads only what that delivery added.
    int64_t defer_log_mark(const std::string& id) const;
    // Entry `e`'s delivery starts at `now_ms` with `busy` deliveries of its
    // queue in flight, itself included (the slow start's count).
    void started(const core::Entry& e, int busy, int64_t now_ms);
    // Entry `e`'s delivery ended with `r` at `now_ms`; `busy_at_start`:
    // its queue's deliveries in flight when it was sent, itself included;
    // `mark`: defer_log_mark() then; `started_ms`: when it was sent (-1:
    // not known).  False when no receiver saw it
    // (core::DeliveryResult::unseen): its agent deferred it with no hop
    // status and appended no record of its recipients to the defer log, so
    // it took none of them in hand (its queue file was gone).
    bool delivered(const core::Entry& e, int busy_at_start, const core::DeliveryResult& r,
                   int64_t now_ms, int64_t mark, int64_t started_ms = -1);
    // Forgets what has been quiet long enough (at most once a second).
    void sweep(int64_t now_ms);
    // Sets who is told of changes (the destination state store).
    void observe(Observer observer) { observer_ = std::move(observer); }
    // What applies a group's learned limit (empty: forgotten).
    using GroupApplier =
        std::function<void(const std::string& transport, const std::string& provider,
                           const core::LearnedLimit& limit)>;
    // Learns per provider for the members of `scope`'s groups (which
    // outlives this), handing what is learned to `apply`.
    void use_provider_scope(ProviderScope* scope, GroupApplier apply);
    // Takes up `limit`, learned for `target` at `learned_at` (Unix
    // seconds) by an earlier run from `cause` (if known), unless
    // `target`'s transport learns no limits now or the limit would be
    // forgotten by `now_ms`.  Whether it was taken up.
    bool restore(const core::AdminTarget& target, const core::LearnedLimit& limit,
                 int64_t learned_at, int64_t now_ms, std::optional<Cause> cause = std::nullopt);
    // The reply that taught `q` its limit (its group's, for a member), if
    // it has one.
    const Cause* cause(const core::Queue& q) const;
    // Whether `q`'s learned limit is a slow start's cap (nothing learned yet).
    bool slow_start(const core::Queue& q) const;
    // What a group (target ProviderScope::target_of()) has learned.
    core::LearnedLimit group_limit(const core::AdminTarget& target) const {
        return group_policy_.limit(target.text());
    }
    // The rules the replies are matched against (for its counters).
    const ReplyClassifier& classifier() const { return classifier_; }

    // DeliveryObserver: each delivery on a transport it covers, from its
    // start (the defer log's mark) to its end (before the scheduler hears
    // of it, which it tells whether a receiver saw it), and the sweep.
    void delivery_started(DeliveryEvent& ev) override;
    void delivery_ended(DeliveryEvent& ev) override;
    void before_selection(const WallClock& clock) override { sweep(clock.now_ms()); }

  private:
    // The class and words of the records entry `e`'s delivery added to its
    // message's defer log after `mark`: the most limiting class among them
    // (connection limit, rate limit, greylist, hard, other), or nothing.
    std::optional<std::pair<ReplyClass, core::Dsn>> defer_log_class(const core::Entry& e,
                                                                    int64_t mark) const;
    // Logs `change` and hands it to the scheduler (or, for a group, its
    // applier) and the observer.
    void apply(const AdaptivePolicy::Change& change, const core::AdminTarget& target,
               const Cause* cause, int64_t now_ms);
    // "N deliveries per Ws window", for the log.
    std::string quota_text(int quota) const;
    // Whether `target` learns with the window model.
    bool windowed(const core::AdminTarget& target) const {
        return window_ && ProviderScope::provider_in(target).empty();
    }
    // What the scheduler holds queue `target` to at `now_ms`: the policy's
    // limit, with the window's part where it learns with windows.
    core::LearnedLimit core_limit(const core::AdminTarget& target, int64_t now_ms) const;
    // Hands the scheduler core_limit() of queue `target`.
    void push(const core::AdminTarget& target, int64_t now_ms);
    // What the state store keeps for `target`: what was learned (not a
    // slow start's cap, a hold, or a window's first delivery alone).
    core::LearnedLimit stored_limit(const core::AdminTarget& target) const;
    // Tells the observer of `target`'s stored limit and its reply.
    void tell(const core::AdminTarget& target);
    // Applies what the window model did for `target` at `now_ms` (a start,
    // an end with the reply `cause`, a sweep): logs a change of its quota,
    // keeps it, and hands the scheduler a changed limit.
    void window_step(const core::AdminTarget& target, const AdaptiveWindow::Step& step,
                     const Cause* cause, int64_t now_ms);
    // The target queue `q` learns for: its group's, or its own.
    core::AdminTarget target_of(const core::Queue& q) const;
    // The policy that learns for `target` (a group's or a queue's).
    AdaptivePolicy& policy_of(const core::AdminTarget& target) {
        return ProviderScope::provider_in(target).empty() ? policy_ : group_policy_;
    }
    const AdaptivePolicy& policy_of(const core::AdminTarget& target) const {
        return ProviderScope::provider_in(target).empty() ? policy_ : group_policy_;
    }

    std::set<std::string> transports_;
    ReplyClassifier classifier_;
    AdaptivePolicy policy_;
    // cqmgr_adaptive_rate_model = window: the queues' window model.
    std::unique_ptr<AdaptiveWindow> window_;
    // The groups' policy: the same settings, without a slow start.
    AdaptivePolicy group_policy_;
    ProviderScope* scope_ = nullptr;
    GroupApplier group_applier_;
    core::Scheduler& sched_;
    DeferLogPath defer_log_path_;
    std::map<core::AdminTarget, Cause> causes_;
    std::map<std::string, core::AdminTarget> targets_; // policy key -> queue
    int64_t forget_seconds_;
    int64_t last_sweep_ms_ = 0;
    Observer observer_;
};

// The receiver's own words in an SMTP client's reason: what follows
// "host NAME[ADDR] said: " or "... refused to talk to me: ", else all.
std::string receiver_words(const std::string& text);
// The settings of the policy from main.cf.
AdaptiveSettings adaptive_settings(const conf::QmgrParams& params);
// The settings of the window model from main.cf.
WindowSettings window_settings(const conf::QmgrParams& params);

} // namespace cqmgr::qmgr
