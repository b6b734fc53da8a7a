// ReplyActions' side of the actions shared across a cluster
// (shared_actions.hpp): what is told of an action taken or ended early
// here, and how another host's action is applied or ended here, the
// sender scopes' on the group of the same name here.
#include "action_words.hpp"
#include "log.hpp"
#include "reply_actions.hpp"

#include <unordered_set>

namespace cqmgr::qmgr {

std::optional<SharedAction> ReplyActions::shared_of(const Active& a) const {
    using S = ReplyAction::Scope;
    SharedAction s;
    s.scope = a.parsed.scope;
    s.transport = a.target.transport;
    const bool sender = s.scope == S::sender_destination || s.scope == S::sender_provider;
    if (sender == a.group.empty()) return std::nullopt;
    switch (a.parsed.scope) {
    case S::destination:
    case S::sender_destination:
        if (a.target.queue.empty()) return std::nullopt;
        s.name = a.target.queue;
        break;
    case S::transport:
        if (!a.target.queue.empty()) return std::nullopt;
        break;
    case S::provider:
    case S::sender_provider: {
        // Its members' scope: "smtp:provider NAME", after "sender GROUP "
        // for a group's.
        const std::string head = (sender ? "sender " + a.group + " " : std::string()) +
                                 a.target.transport + ":provider ";
        if (!a.scope.starts_with(head)) return std::nullopt;
        s.name = a.scope.substr(head.size());
        break;
    }
    }
    s.group = a.group;
    s.since = a.since;
    s.until = a.until;
    s.rule = a.rule;
    s.action = a.action;
    s.reason = a.reason;
    return s;
}

std::vector<SharedAction> ReplyActions::shared() const {
    std::vector<SharedAction> out;
    std::unordered_set<std::string> ids;
    auto add = [&](const Active& a) {
        if (auto s = shared_of(a); s && ids.insert(s->id()).second) out.push_back(std::move(*s));
    };
    for (const auto& [target, a] : actives_)
        add(a);
    for (const auto& [key, a] : sender_actives_)
        add(a);
    return out;
}

void ReplyActions::shared_started(const core::AdminTarget& target, const std::string& group) {
    if (!share_.started) return;
    const Active* a = group.empty() ? active(target) : sender_active(target, group);
    if (!a) return;
    if (auto s = shared_of(*a)) share_.started(*s);
}

void ReplyActions::shared_ended(const Active& a) {
    if (!share_.ended) return;
    if (auto s = shared_of(a)) share_.ended(*s);
}

void ReplyActions::adopt(const SharedAction& s) {
    const int64_t now = clock_.now();
    const std::string key = s.key();
    auto parsed = action_of(s.action);
    if (!parsed || parsed->kind == ReplyAction::Kind::warn || parsed->scope != s.scope) {
        log::warn("cqmgr: " + key + ": reply rule " + s.rule + " (\"" + s.action +
                  "\") from the cluster (" + s.host + ") is no action here" +
                  (parsed ? std::string() : ": " + parsed.error().message()) + "; ignored");
        return;
    }
    if (s.until != 0 && s.until <= now) return;
    using S = ReplyAction::Scope;
    // A sender scope's group, as numbered here (0: no group here, so no
    // mail of it to bound).
    core::SenderGroup group = 0;
    if (!s.group.empty()) {
        group = scopes_.sender_number ? scopes_.sender_number(s.group) : 0;
        if (group == 0) return;
    }
    std::vector<core::AdminTarget> targets;
    if (s.scope == S::provider || s.scope == S::sender_provider) {
        if (scopes_.provider_queues)
            for (const std::string& name : scopes_.provider_queues(s.transport, s.name))
                targets.push_back({s.transport, name});
    } else {
        targets.push_back({s.transport, s.name});
    }
    // A provider's members, and a group's, are logged once, as the rule's
    // own action is.
    const bool one_line = s.scope != S::destination && s.scope != S::transport;
    int started = 0;
    for (const core::AdminTarget& target : targets) {
        // That rule's action in force here already: nothing new.
        const Active* in_force = group != 0 ? sender_active(target, s.group) : active(target);
        if (in_force && in_force->rule == s.rule) continue;
        Active act;
        act.target = target;
        act.rule = s.rule;
        act.action = s.action;
        act.parsed = *parsed;
        act.reason = s.reason;
        act.since = s.since;
        act.until = s.until;
        act.deliveries = parsed->until_delivered;
        if (one_line) act.scope = key;
        act.group = s.group;
        act.group_number = group;
        if (group != 0)
            sender_start(std::move(act));
        else
            start(std::move(act), key, s.reason, false);
        ++started;
    }
    if (started == 0) return;
    log::info("cqmgr: " + key + ": reply rule " + s.rule + " (\"" + s.action +
              "\"): " + action_words::doing(*parsed) + " from the cluster (" + s.host +
              (s.until ? ", " + action_words::span(s.until - now) + " left" : std::string()) + ")" +
              (one_line ? ", " + std::to_string(started) +
                              (started == 1 ? " destination" : " destinations")
                        : std::string()) +
              ", from \"" + s.reason + "\"");
}

void ReplyActions::end_shared(const SharedAction& s) {
    const std::string id = s.id();
    auto same = [this, &id](const Active& a) {
        auto mine = shared_of(a);
        return mine && mine->id() == id;
    };
    const std::string why = "in the cluster (" + s.host + ")";
    // Ended as at its time (a scope's members logged once), and not told
    // to the cluster again.
    std::vector<core::AdminTarget> ending;
    for (const auto& [target, a] : actives_)
        if (same(a)) ending.push_back(target);
    for (const core::AdminTarget& target : ending) {
        requests_.set_limit(target, core::LimitChange::rule(std::nullopt));
        end_action(target, why, false);
    }
    std::vector<SenderKey> senders;
    for (const auto& [key, a] : sender_actives_)
        if (same(a)) senders.push_back(key);
    for (const SenderKey& key : senders) {
        auto it = sender_actives_.find(key);
        requests_.set_sender_rule(key.first, it->second.group_number, std::nullopt);
        sender_end(it, why, false);
    }
}

} // namespace cqmgr::qmgr
