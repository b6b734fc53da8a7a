// Reply rules that act (cqmgr_reply_actions; docs/admin-guide.md): each
// delivery's outcome that is not a success is matched, boundedly, against
// the admin's pcre: or regexp: table: the enhanced status code and the
// receiver's text, "STATUS TEXT" as the adaptive limits' reply rules see
// it, from the agent's hop status or, for recipients deferred one by one,
// from the records the delivery added to the message's defer log
// (entry_records.hpp).  A rule's result (reply_action.hpp) names an
// action, a scope, a threshold and a duration: once a rule matched N times
// within its period for one scope key (threshold_windows.hpp), its action
// becomes the queues' rule bound in the scheduler (core::Limits::rule; a
// backoff's is its profile's limits, cqmgr_backoff_profiles),
// asked for through CoreRequests, and is logged as one line naming the
// rule.  The action ends at its time (the scheduler's timer, then
// expired()), after N deliveries (`until N delivered`), or by
// `cqmgrctl resume` (resume()).  Actions only decide when mail is tried:
// a hold, a cap or a pause; nothing is deferred or bounced by them.
//
// A later action on the same target replaces the one in force; the same
// rule matching again while its action is in force changes nothing (its
// end is not pushed back).
//
// With cqmgr_redis_server, the actions are shared with the cluster's other
// hosts (shared_actions.hpp, through share(), adopt(), end_shared();
// reply_actions_shared.cpp).  The sender scopes (sender-destination,
// sender-provider) act on one sender group's mail only
// (sender_actions.cpp): on each target queue the group's rule bound in the
// scheduler (core::Scheduler::set_sender_rule), kept apart from the
// queues' actions, by target and group.
#pragma once

#include "backoff_profiles.hpp"
#include "clock.hpp"
#include "core_requests.hpp"
#include "delivery_observer.hpp"
#include "regex_table.hpp"
#include "reply_action.hpp"
#include "shared_action.hpp"
#include "threshold_windows.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace cqmgr::qmgr {

class ReplyActions : public DeliveryObserver {
  public:
    // Where the defer log of a message (by queue ID) is.
    using DeferLogPath = std::function<std::string(const std::string& id)>;

    // What a scope names beyond one destination or one transport: the
    // queue manager's providers and sender groups.  Each may be empty
    // (nothing known): an action of that scope then does nothing.
    struct Scopes {
        // The provider of queue `q` ("": none).
        std::function<std::string(const core::Queue& q)> provider;
        // The destinations (queue names) of `provider` on `transport`.
        std::function<std::vector<std::string>(const std::string& transport,
                                               const std::string& provider)>
            provider_queues;
        // The sender group of entry `e`'s message ("": none).
        std::function<std::string(const core::Entry& e)> sender_group;
        // The number of the sender group named `name`, numbered now if
        // need be (0: not a group now): an action restored by name.
        std::function<core::SenderGroup(const std::string& name)> sender_number;
    };

    // An action in force on one target (a queue, or every queue of a
    // transport).
    struct Active {
        core::AdminTarget target;
        std::string rule;   // "pcre:/etc/postfix/reply_actions, line 3"
        std::string action; // the rule's result as written
        ReplyAction parsed;
        std::string reason;     // the reply that made the rule act
        int64_t since = 0;      // Unix seconds
        int64_t until = 0;      // when it ends by itself (0: not by time)
        int64_t deliveries = 0; // deliveries left before it ends (0: not by count)
        // The scope it was taken for when that covers several queues (a
        // provider's "smtp:provider NAME"), else "": such an action is
        // logged once for the scope, not once per member.
        std::string scope;
        // A sender scope's: the group's name and number ("" and 0: none).
        std::string group;
        core::SenderGroup group_number = 0;
        core::RuleLimit limit() const;
    };
    // An action on one sender group's mail on one target: the target and
    // the group's name.
    using SenderKey = std::pair<core::AdminTarget, std::string>;
    // Told of every change of what is in force (to keep it across restarts).
    using Keep = std::function<void(const std::map<core::AdminTarget, Active>& actives)>;

    // `rules`: the table of cqmgr_reply_actions, read before the jail;
    // `profiles`: cqmgr_backoff_profiles' (the limits of a rule's
    // `backoff PROFILE`; a rule naming a profile they lack is a bad rule).
    ReplyActions(RegexTable rules, CoreRequests& requests, const WallClock& clock,
                 DeferLogPath defer_log_path, Scopes scopes = {}, BackoffProfiles profiles = {});

    // Who is told of changes.
    void keep(Keep keep) { keep_ = std::move(keep); }
    // Takes up the actions an earlier run kept (after a restart), except
    // those whose time is over, which are logged and dropped.
    void restore(std::vector<Active> kept);

    // DeliveryObserver: the defer log's mark at each start (unless the
    // adaptive limits took it already), the match at each end.
    void delivery_started(DeliveryEvent& ev) override;
    void delivery_ended(DeliveryEvent& ev) override;

    // Entry `e` of queue `q` ended with `r`: matched against the rules
    // (`mark`: where the message's defer log ended when it was sent), and
    // counted for the actions that end after N deliveries.
    void delivered(const core::Entry& e, const core::DeliveryResult& r, int64_t mark);
    // Ends the actions in force that `target` covers (a queue, a queue's
    // name on every transport, or a whole transport and its queues):
    // `cqmgrctl resume`.  Returns the targets whose action ended.
    std::vector<core::AdminTarget> resume(const core::AdminTarget& target);
    // The scheduler ended the action on `target` at its time
    // (core::Driver::admin_expired): from inside a scheduler callback.
    void expired(const core::AdminTarget& target);

    // The action in force on `target` exactly, if any.
    const Active* active(const core::AdminTarget& target) const;
    // The action that bounds queue `q` (its own, else its transport's).
    const Active* covering(const core::Queue& q) const;
    const std::map<core::AdminTarget, Active>& actives() const { return actives_; }
    // Rules whose result is not an action (warned about when they match).
    size_t bad_rules() const;

    // The cluster's side (shared_actions.hpp): told of each action a rule
    // takes here (once, not per member), and of each that ends early here
    // (by resume, or after N deliveries: once its last member's ends).
    struct Share {
        std::function<void(const SharedAction&)> started;
        std::function<void(const SharedAction&)> ended;
    };
    void share(Share share) { share_ = std::move(share); }
    // Applies another host's action (or this host's from before a
    // restart) with its end, logged once as from the cluster; nothing when
    // its time is over, its scope has no member here (a sender scope's
    // group is no group here), or each target has that rule's action in
    // force already.
    void adopt(const SharedAction& a);
    // Ends here the action `a` that ended early on another host (not told
    // to the cluster again).
    void end_shared(const SharedAction& a);
    // The actions in force here that are shared, one per action.
    std::vector<SharedAction> shared() const;
    // The sender scopes' actions (sender_actions.cpp).
    const std::map<SenderKey, Active>& sender_actives() const { return sender_actives_; }
    // The action in force on group `group`'s mail on `target`, if any.
    const Active* sender_active(const core::AdminTarget& target, const std::string& group) const;
    // The actions in force on sender groups' mail on queue `q`.
    std::vector<const Active*> sender_covering(const core::Queue& q) const;
    // Ends the actions on group `group`'s mail (every group's when "")
    // that `target` covers, as resume() does: `cqmgrctl resume TARGET
    // [sender GROUP]`.  Returns what ended.
    std::vector<SenderKey> resume_senders(const core::AdminTarget& target,
                                          const std::string& group);
    // The scheduler ended the action on group `g`'s mail on `target` at
    // its time (core::Driver::sender_rule_expired): from inside a
    // scheduler callback.
    void sender_expired(const core::AdminTarget& target, core::SenderGroup g);

  private:
    // A rule's result as an action, a backoff with its profile's limits.
    Result<ReplyAction, ActionError> action_of(std::string_view text) const;
    // The words a delivery's outcome gives the rules: "STATUS TEXT" of
    // each distinct reply, at most a few.
    std::vector<std::string> subjects(const core::Entry& e, const core::DeliveryResult& r,
                                      int64_t mark) const;
    // Rule `rule` matched for entry `e` with `words`: counted, and acted
    // on at its threshold.
    void matched(size_t rule, const core::Entry& e, const std::string& words, int64_t now_ms);
    // Places `a` in the scheduler and in actives_, logs it.
    void start(Active a, const std::string& key, const std::string& words, bool log = true);
    // Ends the action on `target` (it is in actives_) for `why`; `tell`:
    // also remove it from the scheduler (not when the scheduler ended it).
    void end_action(const core::AdminTarget& target, const std::string& why, bool tell);
    void changed() {
        if (keep_) keep_(actives_);
    }
    // `a` as the cluster shares it, if its scope is shared.
    std::optional<SharedAction> shared_of(const Active& a) const;
    // The cluster hears that the action on `target` (on group `group`'s
    // mail there, unless "") started, or that `a` ended early.
    void shared_started(const core::AdminTarget& target, const std::string& group);
    void shared_ended(const Active& a);
    // Logs the end of `a` on `who` for `why` (`tell`: not by the
    // scheduler), once for a scope of several queues, by its last member;
    // whether it was its scope's last.
    bool log_end(const Active& a, const std::string& who, const std::string& why, bool tell);
    // Keeps `a` under `key` in `actives`, replacing what was there, and
    // counts it.
    template <class Key> void keep_active(std::map<Key, Active>& actives, Key key, Active a);
    // The sender scopes' (sender_actions.cpp): places `a` (with its group)
    // in the scheduler and in sender_actives_; ends `it` for `why`
    // (`tell`: also in the scheduler); counts a delivery of entry `e`
    // that went through for the actions that end after N.
    void sender_start(Active a);
    void sender_end(std::map<SenderKey, Active>::iterator it, const std::string& why, bool tell);
    void sender_delivered(const core::Entry& e);
    // Takes up an action with a group that an earlier run kept; false when
    // its group is no group now (dropped).
    bool sender_restore(Active& a);

    RegexTable rules_;
    BackoffProfiles profiles_;
    std::vector<std::optional<ReplyAction>> parsed_; // by rule
    std::vector<std::string> bad_;                   // by rule: why it is no action
    CoreRequests& requests_;
    const WallClock& clock_;
    DeferLogPath defer_log_path_;
    Scopes scopes_;
    std::string retry_transport_;
    ThresholdWindows windows_;
    std::map<core::AdminTarget, Active> actives_;
    std::map<SenderKey, Active> sender_actives_;
    size_t counting_ = 0; // actives (of both) that end after N deliveries
    // Actions in force per rule and scope of several queues (Active::scope),
    // so that such a scope's end is logged once, by its last member.
    std::unordered_map<std::string, int> scoped_;
    WarningLimiter limiter_;
    Keep keep_;
    Share share_;
};

template <class Key>
void ReplyActions::keep_active(std::map<Key, Active>& actives, Key key, Active a) {
    if (auto it = actives.find(key); it != actives.end()) {
        if (it->second.deliveries > 0) --counting_;
        if (!it->second.scope.empty()) --scoped_[it->second.rule + '\n' + it->second.scope];
    }
    if (a.deliveries > 0) ++counting_;
    if (!a.scope.empty()) ++scoped_[a.rule + '\n' + a.scope];
    actives.insert_or_assign(std::move(key), std::move(a));
    changed();
}

} // namespace cqmgr::qmgr
