// The reply rules' sender scopes (sender-destination, sender-provider):
// an action on one sender group's mail, on each target queue, while other
// senders' mail to the same destinations goes on.  In the scheduler it is
// the group's rule bound on the queue (core::Scheduler::set_sender_rule),
// asked for through CoreRequests as the queues' rules are; here it is kept
// by target and group name (sender_actives_), apart from the queues'
// actions, and ends as they do: at its time (the scheduler's
// sender_rule_expired), after N of the group's deliveries there went
// through, or by `cqmgrctl resume TARGET [sender GROUP]`.  It is logged
// once for its scope ("sender GROUP smtp:d.example", or "sender GROUP
// smtp:provider NAME" with its number of destinations), as matched()
// writes it.  With cqmgr_redis_server it is shared with the cluster as the
// queues' actions are (reply_actions_shared.cpp): the other hosts bound
// the group of the same name, and an early end here ends it there.
#include "log.hpp"
#include "reply_actions.hpp"

namespace cqmgr::qmgr {

namespace {
// "sender GROUP TARGET": whose action it is, for the log and the
// threshold's key.
std::string who(const ReplyActions::Active& a) {
    return "sender " + a.group + " " + a.target.text();
}
} // namespace

const ReplyActions::Active* ReplyActions::sender_active(const core::AdminTarget& target,
                                                        const std::string& group) const {
    auto it = sender_actives_.find({target, group});
    return it == sender_actives_.end() ? nullptr : &it->second;
}

std::vector<const ReplyActions::Active*> ReplyActions::sender_covering(const core::Queue& q) const {
    std::vector<const Active*> out;
    const core::AdminTarget target{q.transport->name, q.name};
    for (auto it = sender_actives_.lower_bound({target, {}});
         it != sender_actives_.end() && it->first.first == target; ++it)
        out.push_back(&it->second);
    return out;
}

void ReplyActions::sender_start(Active a) {
    requests_.set_sender_rule(a.target, a.group_number, a.limit());
    SenderKey key{a.target, a.group};
    keep_active(sender_actives_, std::move(key), std::move(a));
}

void ReplyActions::sender_end(std::map<SenderKey, Active>::iterator it, const std::string& why,
                              bool tell) {
    const Active& a = it->second;
    // Ended early here (by resume, or its deliveries): ended in the cluster.
    if (log_end(a, who(a), why, tell) && tell) shared_ended(a);
    if (a.deliveries > 0) --counting_;
    windows_.forget(who(a));
    if (tell) requests_.set_sender_rule(a.target, a.group_number, std::nullopt);
    sender_actives_.erase(it);
    changed();
}

void ReplyActions::sender_delivered(const core::Entry& e) {
    const core::AdminTarget target{e.queue->transport->name, e.queue->name};
    for (auto it = sender_actives_.lower_bound({target, {}});
         it != sender_actives_.end() && it->first.first == target; ++it) {
        Active& a = it->second;
        if (a.group_number != e.message->sender_group || a.deliveries == 0) continue;
        // Kept as counted at the action's start, as the queues' are.
        if (--a.deliveries == 0)
            sender_end(it, "after " + std::to_string(a.parsed.until_delivered) + " deliveries",
                       true);
        return; // one group's action per queue
    }
}

std::vector<ReplyActions::SenderKey> ReplyActions::resume_senders(const core::AdminTarget& target,
                                                                  const std::string& group) {
    std::vector<SenderKey> ended;
    for (const auto& [key, a] : sender_actives_) {
        const core::AdminTarget& t = key.first;
        bool covered = target.any_transport()     ? t.queue == target.queue
                       : target.whole_transport() ? t.transport == target.transport
                                                  : t == target;
        if (covered && (group.empty() || key.second == group)) ended.push_back(key);
    }
    for (const SenderKey& key : ended)
        sender_end(sender_actives_.find(key), "by resume", true);
    return ended;
}

void ReplyActions::sender_expired(const core::AdminTarget& target, core::SenderGroup g) {
    for (auto it = sender_actives_.lower_bound({target, {}});
         it != sender_actives_.end() && it->first.first == target; ++it)
        if (it->second.group_number == g) {
            sender_end(it, "at its time", false);
            return;
        }
}

bool ReplyActions::sender_restore(Active& a) {
    a.group_number = scopes_.sender_number ? scopes_.sender_number(a.group) : 0;
    if (a.group_number != 0) return true;
    log::info("cqmgr: " + who(a) + ": reply rule " + a.rule + " (\"" + a.action +
              "\"): dropped, as cqmgr_sender_limits makes no group of " + a.group + " now");
    return false;
}

} // namespace cqmgr::qmgr
