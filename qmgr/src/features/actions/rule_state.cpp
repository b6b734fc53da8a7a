#include "rule_state.hpp"

namespace cqmgr::qmgr {

namespace {
// The setting that keeps action `a`.
state::ControlSetting setting_of(const ReplyActions::Active& a) {
    state::ControlSetting s;
    s.kind = state::ControlSetting::Kind::rule;
    s.transport = a.target.transport;
    s.destination = a.target.queue;
    s.until = a.until;
    s.reason = a.reason;
    s.action = a.action;
    s.rule = a.rule;
    s.since = a.since;
    s.deliveries = a.deliveries;
    s.sender = a.group;
    return s;
}
} // namespace

void keep_rule_actions(ReplyActions& actions, const AdminState* state) {
    if (!state) {
        actions.keep({});
        return;
    }
    // The sender scopes' actions are kept with the others.
    const ReplyActions* all = &actions;
    actions.keep([state, all](const std::map<core::AdminTarget, ReplyActions::Active>& actives) {
        std::vector<state::ControlSetting> rules;
        rules.reserve(actives.size() + all->sender_actives().size());
        for (const auto& [target, a] : actives)
            rules.push_back(setting_of(a));
        for (const auto& [key, a] : all->sender_actives())
            rules.push_back(setting_of(a));
        state->save_rules(std::move(rules));
    });
}

void restore_rule_actions(ReplyActions& actions, const AdminState& state) {
    std::vector<ReplyActions::Active> kept;
    for (const state::ControlSetting& s : state.load_rules()) {
        ReplyActions::Active a;
        a.target = core::AdminTarget{s.transport, s.destination};
        a.rule = s.rule;
        a.action = s.action;
        a.reason = s.reason;
        a.since = s.since;
        a.until = s.until;
        a.deliveries = s.deliveries;
        a.group = s.sender;
        kept.push_back(std::move(a));
    }
    actions.restore(std::move(kept));
}

} // namespace cqmgr::qmgr
