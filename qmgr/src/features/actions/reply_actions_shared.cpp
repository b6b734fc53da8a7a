// ReplyActions' side of the actions shared across a cluster
// (shared_actions.hpp): what is told of an action taken or ended early
// here, and how another host's action is applied or ended here.
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
    switch (a.parsed.scope) {
    case S::destination:
        if (a.target.queue.empty()) return std::nullopt;
        s.name = a.target.queue;
        break;
    case S::transport:
        if (!a.target.queue.empty()) return std::nullopt;
        break;
    case S::provider: {
        // Its members' scope: "smtp:provider NAME".
        const std::string head = a.target.transport + ":provider ";
        if (!a.scope.starts_with(head)) return std::nullopt;
        s.name = a.scope.substr(head.size());
        break;
    }
    default:
        return std::nullopt; // a sender group's: this host's own
    }
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
    for (const auto& [target, a] : actives_)
        if (auto s = shared_of(a); s && ids.insert(s->id()).second) out.push_back(std::move(*s));
    return out;
}

void ReplyActions::shared_started(const core::AdminTarget& target) {
    auto it = actives_.find(target);
    if (!share_.started || it == actives_.end()) return;
    if (auto s = shared_of(it->second)) share_.started(*s);
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
    std::vector<core::AdminTarget> targets;
    if (s.scope == ReplyAction::Scope::provider) {
        if (scopes_.provider_queues)
            for (const std::string& name : scopes_.provider_queues(s.transport, s.name))
                targets.push_back({s.transport, name});
    } else {
        targets.push_back({s.transport, s.name});
    }
    // A provider's members are logged once, as the rule's own action is.
    const bool one_line = s.scope == ReplyAction::Scope::provider;
    int started = 0;
    for (const core::AdminTarget& target : targets) {
        // That rule's action in force here already: nothing new.
        if (auto it = actives_.find(target); it != actives_.end() && it->second.rule == s.rule)
            continue;
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
    std::vector<core::AdminTarget> ending;
    for (const auto& [target, a] : actives_)
        if (auto mine = shared_of(a); mine && mine->id() == id) ending.push_back(target);
    for (const core::AdminTarget& target : ending) {
        // Ended as at its time (a provider's members logged once), and
        // not told to the cluster again.
        requests_.set_limit(target, core::LimitChange::rule(std::nullopt));
        end_action(target, "in the cluster (" + s.host + ")", false);
    }
}

} // namespace cqmgr::qmgr
