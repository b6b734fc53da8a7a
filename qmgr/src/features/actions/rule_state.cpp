#include "rule_state.hpp"

namespace cqmgr::qmgr {

void keep_rule_actions(ReplyActions& actions, const AdminState* state) {
    if (!state) {
        actions.keep({});
        return;
    }
    actions.keep([state](const std::map<core::AdminTarget, ReplyActions::Active>& actives) {
        std::vector<state::ControlSetting> rules;
        rules.reserve(actives.size());
        for (const auto& [target, a] : actives) {
            state::ControlSetting s;
            s.kind = state::ControlSetting::Kind::rule;
            s.transport = target.transport;
            s.destination = target.queue;
            s.until = a.until;
            s.reason = a.reason;
            s.action = a.action;
            s.rule = a.rule;
            s.since = a.since;
            s.deliveries = a.deliveries;
            rules.push_back(std::move(s));
        }
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
        kept.push_back(std::move(a));
    }
    actions.restore(std::move(kept));
}

} // namespace cqmgr::qmgr
