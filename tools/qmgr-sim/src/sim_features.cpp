#include "sim_features.hpp"

#include "clock.hpp"
#include "core_requests.hpp"
#include "cqmgr/conf/config_error.hpp"
#include "provider_gates.hpp"
#include "provider_maps.hpp"
#include "reply_actions.hpp"
#include "sender_groups.hpp"
#include "workload.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace cqmgr::sim {

namespace {

// The simulated clock, for the daemon's parts that read a WallClock.
class SimClock final : public qmgr::WallClock {
  public:
    double t = 0;
    int64_t now() const override { return static_cast<int64_t>(std::floor(t)); }
    protocol::TimeVal precise() const override {
        auto s = static_cast<int64_t>(std::floor(t));
        return {s, static_cast<int64_t>((t - static_cast<double>(s)) * 1e6)};
    }
};

class Features final : public core::SimHooks {
  public:
    using Warn = std::function<void(const std::string&)>;

    Features(const conf::QmgrParams& params, const Workload& w, Warn warn) : warn_(warn) {
        for (const auto& d : w.sim.destinations)
            if (!d.provider.empty()) named_[d.name] = d.provider;
        if (!params.cqmgr_provider_maps.empty())
            maps_ = qmgr::ProviderMaps::open(params.cqmgr_provider_maps, warn);
        if (!params.cqmgr_provider_concurrency_limits.empty() ||
            !params.cqmgr_provider_rate_limits.empty())
            gates_.emplace(
                conf::LookupTables::open(params.cqmgr_provider_concurrency_limits),
                conf::LookupTables::open(params.cqmgr_provider_rate_limits),
                [this](const std::string& q) { return provider_of(q); }, warn);
        if (!params.cqmgr_sender_limits.empty())
            senders_ = qmgr::SenderGroups::open(params.cqmgr_sender_limits, warn);
        if (!w.reply_actions.empty())
            rules_ =
                qmgr::RegexTable::parse("pcre", w.origin + " reply_actions", w.reply_actions, warn);
        else if (!params.cqmgr_reply_actions.empty())
            rules_ = qmgr::RegexTable::open(params.cqmgr_reply_actions, warn);
        profiles_ = qmgr::BackoffProfiles::open(params.cqmgr_backoff_profiles, warn);
    }

    bool any() const { return gates_ || !senders_.empty() || rules_; }

    void message_arrives(core::Scheduler& s, core::Message& m,
                         const core::SimMessage& sm) override {
        start(s);
        if (sm.sender.empty() || senders_.empty()) return;
        m.sender_group = senders_.group(sm.sender, s);
        if (m.sender_group != 0 && !group_names_.count(m.sender_group))
            if (auto found = senders_.find(sm.sender)) group_names_[m.sender_group] = found->name;
    }
    std::optional<int> queue_gate(const core::Queue& q) override {
        return gates_ ? gates_->queue_gate(q) : std::nullopt;
    }
    void queue_freed(const core::Queue& q) override {
        if (gates_) gates_->queue_freed(q);
    }
    void admin_expired(core::AdminKind kind, const core::AdminTarget& target, double now) override {
        clock_.t = now;
        if (kind == core::AdminKind::rule && actions_) actions_->expired(target);
    }
    void sender_rule_expired(const core::AdminTarget& target, core::SenderGroup g,
                             double now) override {
        clock_.t = now;
        if (actions_) actions_->sender_expired(target, g);
    }
    void delivery_started(core::Scheduler& s, const core::Entry& e, double now) override {
        clock_.t = now;
        if (gates_) gates_->started(s, *e.queue, now);
    }
    void delivery_ended(core::Scheduler& s, const core::Entry& e, const core::DeliveryResult& r,
                        double now) override {
        clock_.t = now;
        if (gates_) gates_->ended(s, *e.queue, now);
        // No defer log: the receiver's words are the hop status.
        if (actions_) actions_->delivered(e, r, 0);
    }
    double next_wake() const override {
        return gates_ ? gates_->next_wake() : std::numeric_limits<double>::infinity();
    }
    void wake(core::Scheduler& s, double now) override {
        clock_.t = now;
        if (gates_) gates_->wake(s, now);
    }
    void finish(core::SimResult& r) override {
        // Actions still in force at the end.
        for (const auto& [target, a] : shown_)
            events_.push_back({r.end_time, "in force", target.text(), a});
        r.events.insert(r.events.end(), events_.begin(), events_.end());
        std::stable_sort(r.events.begin(), r.events.end(),
                         [](const auto& a, const auto& b) { return a.time < b.time; });
    }

  private:
    // The provider the daemon would make destination `name` a member of.
    std::string provider_of(const std::string& name) const {
        if (!maps_.empty()) return maps_.provider_of_domain(name).value_or("");
        auto it = named_.find(name);
        return it == named_.end() ? "" : it->second;
    }
    // Makes the parts that need the scheduler, once it exists.
    void start(core::Scheduler& s) {
        if (sched_) return;
        sched_ = &s;
        if (!rules_) return;
        requests_ = std::make_unique<qmgr::CoreRequests>(io_, s);
        qmgr::ReplyActions::Scopes scopes;
        scopes.provider = [this](const core::Queue& q) { return provider_of(q.name); };
        scopes.provider_queues = [this](const std::string& transport, const std::string& p) {
            // The members as they are when the rule acts: the queues that exist.
            std::vector<std::string> out;
            auto t = sched_->transports().find(transport);
            if (t == sched_->transports().end()) return out;
            for (const auto& [name, q] : t->second->queue_by_name)
                if (provider_of(name) == p) out.push_back(name);
            return out;
        };
        scopes.sender_group = [this](const core::Entry& e) {
            auto it = group_names_.find(e.message->sender_group);
            return it == group_names_.end() ? std::string() : it->second;
        };
        actions_ = std::make_unique<qmgr::ReplyActions>(
            std::move(*rules_), *requests_, clock_,
            [](const std::string&) { return std::string(); }, scopes, std::move(profiles_));
        actions_->keep([this](const auto& actives) { record(actives); });
    }
    // Records what started and what ended since the last change.
    void record(const std::map<core::AdminTarget, qmgr::ReplyActions::Active>& actives) {
        for (auto it = shown_.begin(); it != shown_.end();)
            if (!actives.count(it->first)) {
                events_.push_back({clock_.t, "end", it->first.text(), it->second});
                it = shown_.erase(it);
            } else {
                ++it;
            }
        for (const auto& [target, a] : actives) {
            std::string text = a.rule + " \"" + a.action + "\" from \"" + a.reason + "\"";
            auto [it, added] = shown_.try_emplace(target, text);
            if (!added && it->second == text) continue;
            it->second = text;
            events_.push_back({clock_.t, "start", target.text(), text});
        }
    }

    Warn warn_;
    SimClock clock_;
    std::map<std::string, std::string> named_; // destination -> the workload's provider
    qmgr::ProviderMaps maps_;
    std::optional<ProviderGates> gates_;
    qmgr::SenderGroups senders_;
    std::map<core::SenderGroup, std::string> group_names_;
    std::optional<qmgr::RegexTable> rules_;
    qmgr::BackoffProfiles profiles_; // of the rules' backoff actions
    core::Scheduler* sched_ = nullptr;
    asio::io_context io_;
    std::unique_ptr<qmgr::CoreRequests> requests_;
    std::unique_ptr<qmgr::ReplyActions> actions_;
    std::map<core::AdminTarget, std::string> shown_; // actions in force, as recorded
    std::vector<core::SimEvent> events_;
};

} // namespace

std::shared_ptr<core::SimHooks> make_features(const conf::QmgrParams& params, const Workload& w,
                                              const std::function<void(const std::string&)>& warn) {
    auto f = std::make_shared<Features>(params, w, warn);
    if (!f->any()) return nullptr;
    return f;
}

} // namespace cqmgr::sim
