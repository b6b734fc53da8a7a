// Reply rules' bounds on one sender group's mail (the sender scopes of
// cqmgr_reply_actions): a hold, a cap or a pause after each delivery on
// one queue, for that group's mail alone, while other senders' mail to the
// same destination goes on.
//
// A rule is kept by name (transport, queue name and group: rules_), as
// the queues' rules are in the LimitBook, so that it outlasts the group's
// part on the queue; a part made later finds it (attach).  The part points
// at it (SenderPart::rule), and the job walk asks the part's room as it
// asks its load's (sender_may_start): a job passed over for a rule marks
// it, and the rule frees the transport's blockers when it gains room (a
// delivery of the part ends, its pause ends, or it changes or ends).
//
// Only parts are bounded, so a group with a rule must have parts even
// when cqmgr_sender_limits gives it no limit: its first rule makes it
// limited for the daemon's life, and its peers that exist get their parts
// then (adopt), with their entries.  Its load has no limit, so its room
// is the rule's alone.  Mail of a group with neither still costs one
// branch.
//
// A rule ends at its `until` (a timer, then Driver::sender_rule_expired),
// or when the driver removes it.  Its pause follows each delivery the
// receiver saw, as a queue's rule's pause does (entry.cpp), with one
// delivery at a time; its end is a timer too.  Both timers name the rule
// and are ignored when the rule's own time has moved on.
#include "core.hpp"

#include <algorithm>

namespace cqmgr::core {

std::string sender_rule_key(SenderGroup g, const std::string& queue) {
    return std::to_string(g) + " " + queue;
}

namespace {
// The line -v logs for a change of the rule on `g`'s mail on `target`.
std::string rule_text(const AdminTarget& target, SenderGroup g,
                      const std::optional<RuleLimit>& rule) {
    std::string out = (rule ? "sender_rule_set: " : "sender_rule_end: ") + target.text() +
                      " group " + std::to_string(g);
    if (rule)
        out += (rule->hold ? " hold" : "") + std::string(" concurrency ") +
               std::to_string(rule->concurrency) + " pause " + std::to_string(rule->pause);
    return out;
}
} // namespace

SenderRule* Senders::rule_for(const std::string& transport, const std::string& queue,
                              SenderGroup g) {
    auto it = rules_.find({transport, sender_rule_key(g, queue)});
    return it == rules_.end() ? nullptr : &it->second;
}

bool Senders::set_rule(const AdminTarget& target, SenderGroup g,
                       const std::optional<RuleLimit>& rule) {
    if (g == 0 || target.transport.empty() || target.queue.empty())
        panic("set_sender_rule: no group, transport or queue in " + target.text());
    if (rule && (!rule->any() || rule->concurrency < 0 || rule->pause < 0))
        panic("set_sender_rule: empty or negative limit for " + target.text());
    auto it = rules_.find({target.transport, sender_rule_key(g, target.queue)});
    Transport* t = c_.transports.find(target.transport);
    Queue* q = t ? c_.queues.find(target.transport, target.queue) : nullptr;
    SenderPart* part = q ? part_of(*q, g) : nullptr;
    if (!rule) {
        if (it == rules_.end()) return false;
        rule_erase(it);
    } else {
        if (it != rules_.end() && it->second.limit == *rule) return false;
        if (it == rules_.end()) {
            it = rules_.try_emplace({target.transport, sender_rule_key(g, target.queue)}).first;
            it->second.group = g;
            it->second.transport = target.transport;
            it->second.queue = target.queue;
        }
        SenderRule& r = it->second;
        r.limit = *rule;
        // A pause under way ends with a rule that pauses no more.
        if (r.limit.pause == 0) r.paused_until = 0;
        if (r.limit.until != 0)
            c_.timers.add(r.limit.until,
                          Timer{Timer::Kind::sender_rule, target.transport, it->first.second});
        const size_t size = std::max(ruled_.size(), static_cast<size_t>(g) + 1);
        ruled_.resize(size);
        limited_.resize(std::max(limited_.size(), size));
        limits_.resize(std::max(limits_.size(), size));
        ruled_[g] = true;
        if (!limited_[g]) {
            // Its first rule, on a group without a limit: its mail gets
            // parts now (and they find their rules).
            limited_[g] = true;
            adopt(g);
        } else if (part) {
            part->rule = &r;
        }
    }
    c_.trace([&] { return rule_text(target, g, rule); });
    // A new bound may stop jobs that went, an old one's end free jobs that
    // it stopped: the job walk looks again.
    if (t) c_.jobs.unblock_all(*t);
    c_.driver.wakeup();
    return true;
}

void Senders::rule_erase(Rules::iterator it) {
    const SenderRule& r = it->second;
    if (Queue* q = c_.queues.find(r.transport, r.queue))
        if (SenderPart* part = part_of(*q, r.group)) part->rule = nullptr;
    rules_.erase(it);
}

void Senders::adopt(SenderGroup g) {
    for (const auto& [name, t] : c_.transports.all())
        for (Job& j : t->jobs)
            if (j.message->sender_group == g)
                for (Peer& p : j.peers)
                    if (!p.sender) attach(p);
}

void Senders::rule_ended(Transport& t, SenderPart& part, bool seen) {
    SenderRule& r = *part.rule;
    if (seen && r.limit.pause > 0) {
        // As a queue's pause: after each delivery the receiver saw.
        int64_t until = c_.now + r.limit.pause;
        if (until > r.paused_until) {
            r.paused_until = until;
            c_.timers.add(
                until, Timer{Timer::Kind::sender_rule, t.name, sender_rule_key(r.group, r.queue)});
        }
        return;
    }
    if (r.blocked && part.rule_room() > 0) {
        r.blocked = false;
        c_.jobs.unblock_all(t);
    }
}

void Senders::rule_fire(const std::string& transport, const std::string& key, int64_t due) {
    auto it = rules_.find({transport, key});
    if (it == rules_.end()) return;
    SenderRule& r = it->second;
    if (r.limit.until == due) {
        const AdminTarget target{r.transport, r.queue};
        const SenderGroup g = r.group;
        rule_erase(it);
        c_.trace([&] { return rule_text(target, g, std::nullopt); });
        c_.driver.sender_rule_expired(target, g);
    } else if (r.paused_until == due) {
        r.paused_until = 0;
        r.blocked = false;
    } else {
        return; // replaced or renewed since
    }
    if (Transport* t = c_.transports.find(transport)) c_.jobs.unblock_all(*t);
    c_.driver.wakeup();
}

void Senders::check_rules() const {
    auto fail = [](const std::string& what) { panic("invariant: sender rule " + what); };
    for (const auto& entry : rules_) {
        const auto& key = entry.first;
        const SenderRule& r = entry.second;
        const std::string k = key.first + ":" + r.queue + " group " + std::to_string(r.group);
        if (key.first != r.transport || key.second != sender_rule_key(r.group, r.queue))
            fail(k + ": kept under another key");
        if (!r.limit.any() || r.limit.concurrency < 0 || r.limit.pause < 0)
            fail(k + ": empty or negative");
        if (!limited(r.group) || r.group >= ruled_.size() || !ruled_[r.group])
            fail(k + ": its group has no parts");
        auto timed = [&](int64_t due, const char* what) {
            if (due == 0) return;
            if (due <= c_.now) fail(k + ": outlived its " + what);
            if (!c_.timers.has(due, Timer::Kind::sender_rule, r.transport, key.second))
                fail(k + ": no timer for its " + what);
        };
        timed(r.limit.until, "end");
        timed(r.paused_until, "pause");
        if (r.paused_until && r.limit.pause == 0) fail(k + ": pausing without a pause");
    }
    for (size_t g = 0; g < limited_.size(); ++g)
        if (limited_[g] !=
            ((g < limits_.size() && limits_[g].any()) || (g < ruled_.size() && ruled_[g])))
            fail("group " + std::to_string(g) + ": limited, or not, against its limit and rules");
    // Each part is bound by the rule of its group and queue, if any.
    for (const auto& [name, t] : c_.transports.all())
        for (const auto& [qn, q] : t->queue_by_name)
            for (const SenderPart& part : q->senders) {
                auto it = rules_.find({name, sender_rule_key(t->senders.at(part.load).group, qn)});
                if (part.rule != (it == rules_.end() ? nullptr : &it->second))
                    fail("of part " + std::to_string(part.number) + " on " + name + ":" + qn +
                         ": not its rule");
            }
}

} // namespace cqmgr::core
