// The features beyond stock, as one part of the queue manager: the adaptive
// limits, the destination shares, providers (with their MX path and
// limits), the cluster's limits and the reply rules that act.  Each is made
// only when its cqmgr_ parameter or table turns it on, so that with none
// set the queue manager runs stock's path alone.  They hear of the
// scheduler's work as observers (delivery_observer.hpp) and ask changes of
// it through CoreRequests; none is wired to another except here.
#pragma once

#include "adaptive.hpp"
#include "clock.hpp"
#include "cluster_limits.hpp"
#include "core_requests.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "delivery_observer.hpp"
#include "isolation.hpp"
#include "mx_channel.hpp"
#include "mx_provider_source.hpp"
#include "mx_resolver.hpp"
#include "provider_scope.hpp"
#include "providers.hpp"
#include "regex_table.hpp"
#include "reply_actions.hpp"
#include "shared_actions.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace cqmgr::qmgr {

class ControlCommands;
class DestinationState;
class SenderGroups;
struct ControlSources;
struct FeatureSnapshot;

class Features {
  public:
    // `store`: the active queue's layout (where defer logs are).
    // `reply_rules`: cqmgr_adaptive_reply_rules' table, read before the
    // jail (or none); `tables`: the limits' and providers' tables.
    Features(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
             core::Scheduler& sched, CoreRequests& requests, const queuefile::ActiveQueue& store,
             std::optional<RegexTable> reply_rules, ClusterLimits::Tables tables);

    // Adds the features' observers to `observers`, in the order they must
    // hear: the adaptive limits and shares, then providers' membership
    // before their limits (which read it at a queue's birth).  A queue
    // whose membership changes later is scoped again by the providers'
    // limits and by the scheduler's sender limits per provider.  Called
    // before the delivery part is added.
    void add_observers(DeliveryObservers& observers);
    // Keeps what the adaptive limits learn in the destination state.
    void keep_state(DestinationState& state);
    // The reply rules that act, before start(): their table, read before
    // the jail, and what their scopes name beyond a destination or a
    // transport (the provider scope, when not given, is the providers'
    // membership).  Their observer hears after the delivery part.
    void use_reply_actions(RegexTable rules, ReplyActions::Scopes scopes,
                           DeliveryObservers& observers);
    // The limit sets of the rules' `backoff PROFILE` (cqmgr_backoff_profiles,
    // read before the jail), before use_reply_actions().
    void use_backoff_profiles(BackoffProfiles profiles) { profiles_ = std::move(profiles); }
    // The control socket's commands, or nullptr: the rules' actions are
    // resumed through them and kept in their document.
    void use_control(ControlCommands* commands);
    // The providers' MX path, with the channel opened before the jail and
    // the transports that follow MX records (`agents`); nothing when no
    // provider is configured.
    void use_mx(MxChannel channel, std::map<std::string, std::string> agents);
    // Starts the limits (their connections to the shared state), and the
    // sharing of the rules' actions over the destination limits' one.
    void start();
    // Takes up the rule actions kept in the control settings, once those
    // are restored.
    void restore_actions();
    // `q` was dead in an earlier run: probed when it comes back.
    void restored_dead(const core::Queue& q, int64_t now_ms);
    // A rule's action ended by its time (the scheduler's admin_expired()).
    void rule_expired(const core::AdminTarget& target);
    // A rule's action on sender group `g`'s mail on `target` ended by its
    // time (the scheduler's sender_rule_expired()).
    void sender_rule_expired(const core::AdminTarget& target, core::SenderGroup g) {
        if (actions_) actions_->sender_expired(target, g);
    }
    // The process is about to exit: leases are given back now.
    void exiting();
    // What the control socket's queries read of the features, and what
    // explain shows of their limits; `senders`: the sender groups, for
    // their names (nullptr: none).
    void describe(ControlSources& sources, const SenderGroups* senders = nullptr) const;

    AdaptiveLimits* adaptive() const { return adaptive_.get(); }
    Isolation* isolation() const { return isolation_.get(); }
    Providers* providers() const { return providers_.get(); }
    // The number of queue `q`'s provider (0: none), for sender limits per
    // provider (core::Driver::queue_provider).
    uint32_t provider_number(const core::Queue& q) const {
        return providers_ ? providers_->number_of(q) : 0;
    }
    const ReplyActions* reply_actions() const { return actions_.get(); }
    // The MX lookups' counters, when providers follow MX records.
    std::optional<MxResolverStats> mx_stats() const;
    // The cluster limits' Redis connections and leases, for the metrics
    // (FeatureSnapshot::shared; nothing without cqmgr_redis_server).
    void shared_stats(FeatureSnapshot& s) const;
    // The reply rules' actions on sender groups' mail, counted with the
    // others in force (FeatureSnapshot::transports).
    void sender_rule_stats(FeatureSnapshot& s) const;

  private:
    // Wires the rules' actions to the control commands, when both exist.
    void wire_actions();
    // A provider's learned limit on `transport` (the adaptive limits'
    // provider scope) goes to the providers' gates: kept for its members
    // born from now on, and each member there now is scoped again.
    void provider_learned(const std::string& transport, const std::string& provider,
                          const core::LearnedLimit& limit);

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const WallClock& clock_;
    core::Scheduler& sched_;
    CoreRequests& requests_;
    const queuefile::ActiveQueue& store_;
    // cqmgr_adaptive_limit_transports: made only when the list is not empty.
    std::unique_ptr<AdaptiveLimits> adaptive_;
    // Destination shares: made only when one is set.
    std::unique_ptr<Isolation> isolation_;
    // cqmgr_provider_maps: made only when it names a table; before the
    // limits, which take their tables from the constructor's argument.
    std::unique_ptr<Providers> providers_;
    // cqmgr_adaptive_limit_scope = provider, with adaptive limits and
    // providers: which group each member queue learns with.
    std::unique_ptr<ProviderScope> provider_scope_;
    // The providers' limits (ClusterLimits::provider_scoping).
    ClusterLimits provider_limits_;
    ClusterLimits limits_;
    // cqmgr_reply_actions: made only when its table is given.
    BackoffProfiles profiles_;
    std::unique_ptr<ReplyActions> actions_;
    ControlCommands* control_ = nullptr;
    // The MX path: after the providers, as its answers go to them, so it
    // goes first.
    std::unique_ptr<MxResolver> mx_resolver_;
    std::unique_ptr<MxProviderSource> mx_source_;
    // The rules' actions shared through Redis, when both are configured:
    // last, as it uses the rules' actions and the limits' connection.
    std::unique_ptr<SharedActions> shared_actions_;
};

} // namespace cqmgr::qmgr
