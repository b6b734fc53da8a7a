#include "features.hpp"

#include "control_commands.hpp"
#include "control_queries.hpp"
#include "destination_state.hpp"
#include "explain_features.hpp"
#include "feature_metrics.hpp"
#include "learned_state.hpp"
#include "provider_gates.hpp"
#include "provider_scopes.hpp"
#include "rule_state.hpp"
#include "sender_groups.hpp"

namespace cqmgr::qmgr {

namespace {

// Where a message's defer log is, for the features that read it.
std::function<std::string(const std::string&)> defer_log_path(const queuefile::ActiveQueue& s) {
    return [&s](const std::string& id) { return s.path("defer", id); };
}

// The providers' limits' scoping; with `learned`, what the adaptive
// limits learn per provider narrows their gates.
ClusterLimits::Scoping provider_scoping(const Providers* providers, bool learned) {
    ClusterLimits::Scoping s = ClusterLimits::provider_scoping(providers);
    s.learned = learned;
    return s;
}

} // namespace

Features::Features(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
                   core::Scheduler& sched, CoreRequests& requests,
                   const queuefile::ActiveQueue& store, std::optional<RegexTable> reply_rules,
                   ClusterLimits::Tables tables)
    : io_(io), params_(params), clock_(clock), sched_(sched), requests_(requests), store_(store),
      adaptive_(params.cqmgr_adaptive_limit_transports.empty()
                    ? nullptr
                    : std::make_unique<AdaptiveLimits>(params, std::move(reply_rules), sched,
                                                       defer_log_path(store))),
      isolation_(params.destination_shares ? std::make_unique<Isolation>(params, requests, clock)
                                           : nullptr),
      providers_(tables.provider_maps.empty()
                     ? nullptr
                     : std::make_unique<Providers>(io, std::move(tables.provider_maps), sched)),
      provider_scope_(adaptive_ && providers_ && params.cqmgr_adaptive_limit_scope == "provider"
                          ? std::make_unique<ProviderScope>(
                                *providers_, [a = adaptive_.get()](
                                                 const core::Transport& t) { return a->covers(t); })
                          : nullptr),
      provider_limits_(io, params,
                       ClusterLimits::Tables::of(std::move(tables.provider_rates),
                                                 std::move(tables.provider_concurrency)),
                       sched, provider_scoping(providers_.get(), provider_scope_ != nullptr)),
      limits_(io, params, std::move(tables), sched) {
    if (provider_scope_)
        adaptive_->use_provider_scope(
            provider_scope_.get(), [this](const std::string& transport, const std::string& provider,
                                          const core::LearnedLimit& limit) {
                provider_learned(transport, provider, limit);
            });
}

void Features::provider_learned(const std::string& transport, const std::string& provider,
                                const core::LearnedLimit& limit) {
    learned_to_provider_gates(provider_limits_, *providers_, sched_, transport, provider, limit);
}

void Features::add_observers(DeliveryObservers& observers) {
    observers.add(adaptive_.get());
    observers.add(isolation_.get());
    observers.add(providers_.get());
    // After the providers, whose membership it reads at a queue's birth.
    observers.add(provider_scope_.get());
    if (limits_.active()) observers.add(&limits_);
    if (!providers_) return;
    const bool limits = provider_limits_.active();
    if (limits) {
        observers.add(&provider_limits_);
        // The two limits' gates combine into the core's one.
        if (limits_.active()) {
            limits_.combine_with(&provider_limits_);
            provider_limits_.combine_with(&limits_);
        }
    }
    // Told outside the scheduler's callbacks (Providers::answered).
    providers_->set_listener([this, limits](const core::Queue& q) {
        if (provider_scope_) provider_scope_->joined(q);
        if (limits) provider_limits_.rescope(q);
        if (core::Queue* mine = sched_.find_queue(q.transport->name, q.name))
            sched_.set_queue_provider(*mine, providers_->number_of(q));
    });
}

void Features::keep_state(DestinationState& state) {
    if (state.enabled() && adaptive_) keep_learned(*adaptive_, state);
}

void Features::use_reply_actions(RegexTable rules, ReplyActions::Scopes scopes,
                                 DeliveryObservers& observers) {
    if (providers_ && !scopes.provider)
        scopes = with_provider_scopes(std::move(scopes), *providers_);
    actions_ =
        std::make_unique<ReplyActions>(std::move(rules), requests_, clock_, defer_log_path(store_),
                                       std::move(scopes), std::move(profiles_));
    observers.add(actions_.get());
    wire_actions();
}

void Features::use_control(ControlCommands* commands) {
    if (control_) control_->use_rule_actions(nullptr);
    if (actions_) keep_rule_actions(*actions_, nullptr);
    control_ = commands;
    wire_actions();
}

void Features::wire_actions() {
    if (!actions_ || !control_) return;
    control_->use_rule_actions(actions_.get());
    keep_rule_actions(*actions_, &control_->state());
}

void Features::use_mx(MxChannel channel, std::map<std::string, std::string> agents) {
    if (!providers_) return;
    mx_resolver_ = std::make_unique<MxResolver>(io_.get_executor(), std::move(channel),
                                                mx_resolver_options(params_));
    mx_source_ =
        std::make_unique<MxProviderSource>(*mx_resolver_, providers_->maps(), std::move(agents));
    providers_->use_mx(mx_source_.get());
}

void Features::start() {
    limits_.start();
    if (providers_) provider_limits_.start();
    if (actions_ && limits_.shared()) {
        shared_actions_ = std::make_unique<SharedActions>(io_, *actions_, *limits_.shared(), clock_,
                                                          params_.myhostname);
        shared_actions_->start();
    }
}

void Features::restore_actions() {
    if (control_ && actions_) restore_rule_actions(*actions_, control_->state());
}

void Features::restored_dead(const core::Queue& q, int64_t now_ms) {
    if (isolation_) isolation_->died(q, now_ms);
}

void Features::rule_expired(const core::AdminTarget& target) {
    if (actions_) actions_->expired(target);
}

void Features::exiting() {
    limits_.release_at_exit();
    provider_limits_.release_at_exit();
}

void Features::describe(ControlSources& s, const SenderGroups* senders) const {
    s.adaptive = adaptive_.get();
    s.isolation = isolation_.get();
    s.providers = providers_.get();
    s.provider_limits = &provider_limits_;
    s.actions = actions_.get();
    s.cluster = limits_.active() ? &limits_ : nullptr;
    SenderGroupName names;
    if (senders) names = [senders](core::SenderGroup g) { return senders->name_of(g); };
    s.explain = feature_explain_hooks(providers_.get(), std::move(names));
}

std::optional<MxResolverStats> Features::mx_stats() const {
    if (!mx_resolver_) return std::nullopt;
    return mx_resolver_->stats();
}

void Features::shared_stats(FeatureSnapshot& s) const {
    const std::pair<const ClusterLimits*, const char*> all[] = {{&limits_, "destination"},
                                                                {&provider_limits_, "provider"}};
    for (const auto& [limits, name] : all)
        if (auto up = limits->redis_up()) s.shared.push_back({name, *up, limits->leases_held()});
}

void Features::sender_rule_stats(FeatureSnapshot& s) const {
    if (!actions_) return;
    for (const auto& [key, a] : actions_->sender_actives())
        count_sender_rule(s, key.first.transport, a.limit());
}

} // namespace cqmgr::qmgr
