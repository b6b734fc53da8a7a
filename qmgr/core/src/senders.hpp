// Sender groups' limits (cqmgr_sender_limits) in the scheduler: the load
// each group has in each scope of a transport (SenderLoad) and its part on
// each queue (SenderPart), kept up to date as its entries wait, start and
// end, and what stops the group's jobs in the job walk (sender.cpp); and
// the reply rules' bounds on a group's mail on one queue (SenderRule,
// sender_rule.cpp).
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cqmgr::core {

struct Core;

class Senders {
  public:
    explicit Senders(Core& c) : c_(c) {}

    // Scheduler::set_sender_limit.
    void set_limit(SenderGroup g, const SenderLimit& limit);
    // Whether some group's limit is counted per provider: only then does
    // a queue ask the driver for its provider (Queue::provider).
    bool by_provider() const { return by_provider_; }
    // Peer `p`, of a message with a sender group, has no part yet: gives
    // it its group's part on its queue, and the part its load in the
    // queue's scope, when the group has a limit or a rule (Peer::sender),
    // with the entries the peer has already.  The retry transport's mail
    // is not limited: its agent only defers it.
    void attach(Peer& p);
    // Peer `p`, which has no entries left, is going: its part loses it,
    // and goes too when it was the last (detach_part).
    void detach(Peer& p);
    // A waiting entry of peer `p` starts a delivery: it counts against its
    // load's concurrency, and takes a start from the rate.
    void started(const Peer& p);
    // A delivery of peer `p` ended (or was given back): when a job was
    // passed over for its load or its rule and that has room now, its
    // transport's blockers go.  A delivery the receiver `seen` starts its
    // rule's pause.
    void ended(const Peer& p, bool seen);
    // Whether every waiting entry of job `j` is stopped by its group's
    // limits (the preemption candidate search passes it over); marks the
    // loads that stop it.
    bool job_stopped(const Job& j) const;
    // Scheduler::set_queue_provider: queue `q` now belongs to provider
    // `provider` (0: none); the parts of its groups counted per provider
    // move to the load of their new scope, with their deliveries in flight.
    void rescope(Queue& q, uint32_t provider);
    // The timer of the load `key` of `t`, set for `due`, fired.
    void fire(Transport& t, const std::string& key, int64_t due);
    // select_transport()'s count (Transports::select), one pass at a time:
    // a new pass (begin_pass), then for each queue the waiting entries its
    // groups stop given what the pass has counted of their loads' room on
    // other queues (stopped_in_pass), and what it counted here (lend).
    // Without loads of several queues this is sender_stopped().
    uint32_t begin_pass() { return ++pass_; }
    int stopped_in_pass(const Queue& q, uint32_t pass) const;
    void lend(const Queue& q, uint32_t pass, int counted, int selectable);
    // Checks the loads and parts of `t` against its queues' entries and
    // peers.
    void check(const Transport& t) const;

    // Reply rules' bounds on a group's mail (sender_rule.cpp).
    // Scheduler::set_sender_rule.
    bool set_rule(const AdminTarget& target, SenderGroup g, const std::optional<RuleLimit>& rule);
    // The timer `key` of transport `transport`'s rules, set for `due`,
    // fired: the rule ends, or its pause.
    void rule_fire(const std::string& transport, const std::string& key, int64_t due);
    // Checks the rules, their timers and the parts they bound.
    void check_rules() const;

  private:
    // Whether group `g`'s mail has parts: it has a limit, or had a rule.
    bool limited(SenderGroup g) const { return g < limited_.size() && limited_[g]; }
    // The rule on group `g`'s mail on queue `queue` of `transport`, if any.
    SenderRule* rule_for(const std::string& transport, const std::string& queue, SenderGroup g);
    // The part of group `g` on queue `q`, if it has one.
    SenderPart* part_of(const Queue& q, SenderGroup g) const;
    // Group `g` has its first rule: its mail on every transport gets parts.
    void adopt(SenderGroup g);
    // A delivery on `part`, bound by its rule, ended.
    void rule_ended(Transport& t, SenderPart& part, bool seen);
    // Ends rule `it`: its part, if any, is bound no more.
    using Rules = std::map<std::pair<std::string, std::string>, SenderRule>;
    void rule_erase(Rules::iterator it);

    // The load `key` of `t` for group `g`, made when it is not there.
    uint32_t load_obtain(Transport& t, SenderGroup g, const std::string& key);
    // Part `part` joins load `number`, or leaves its load (its busy
    // entries with it); a load left without parts goes unless its rate
    // still remembers recent starts.
    void join(Transport& t, SenderPart& part, uint32_t number);
    void leave(Transport& t, SenderPart& part);
    // Frees part number `number`, which has no peers.
    void part_free(Transport& t, uint32_t number);
    // Sets `l`'s timer for `due`, unless an earlier one is pending.
    void arm(Transport& t, SenderLoad& l, int64_t due);
    // What the rate of `l` allows now (SenderLoad::rate_room); when it
    // allows nothing, a timer for when it will.
    void rate_update(Transport& t, SenderLoad& l);
    // Frees `l`, which has no parts.
    void release(Transport& t, SenderLoad& l);
    // `l` may have gained room: when a job was passed over for it, the
    // blockers of `t` go.
    void regained(Transport& t, SenderLoad& l);

    Core& c_;
    std::vector<SenderLimit> limits_; // by group
    // By group: it has a limit, or had a rule (a group once bounded by a
    // rule keeps its parts for the daemon's life; the mail of a group with
    // neither costs one branch).
    std::vector<uint8_t> limited_;
    std::vector<uint8_t> ruled_; // by group: it had a rule
    // The rules, by transport and sender_rule_key().
    Rules rules_;
    bool by_provider_ = false;
    uint32_t pass_ = 0;
};

// The key of a rule on group `g`'s mail on queue `queue` (of a transport):
// the key of the group's load per destination there.
std::string sender_rule_key(SenderGroup g, const std::string& queue);

// The key of the load of group `g` for queue `q`, with its limit counted
// `per` destination or provider: the group and the destination, or the
// group and the queue's provider; a queue outside every provider is a
// scope of its own.  A provider's key cannot be a destination's (no
// destination name starts with '#').
std::string sender_scope_key(SenderGroup g, const Queue& q, SenderPer per);

// How many starts a GCRA cell whose theoretical arrival time is `tat`
// allows in the second that begins at `now`, with `interval` seconds
// between starts and `burst` starts at once after a quiet spell.  The
// core's clock counts whole seconds, so each start is given the virtual
// time max(tat, now) and is allowed while that time, less the burst
// allowance, falls before the second ends: a rate of 19 a second starts 19
// in each second, not one, and over any span the count stays within the
// rate times the span, plus one second's worth and the burst.
int gcra_room(double tat, int64_t now, double interval, int64_t burst);

// The part of peer `p`, which has one (Peer::sender).
inline SenderPart& sender_part(const Peer& p) {
    return p.job->transport->senders.part(p.sender);
}
// The load of peer `p`, which has one.
inline SenderLoad& sender_load(const Peer& p) {
    const SenderBook& b = p.job->transport->senders;
    return b.at(b.part(p.sender).load);
}
// A waiting entry of peer `p` came (+1) or went (-1).  Inline: every
// entry passes here at each step, and stock's mail costs one branch.
inline void sender_todo(const Peer& p, int delta) {
    if (!p.sender) return;
    sender_part(p).todo += delta;
    p.queue->sender_todo += delta;
}
// Whether peer `p`'s group may start one more delivery in its scope and
// within its rule on the queue; when not, its load or its rule remembers
// that a job was passed over for it.
inline bool sender_may_start(const Peer& p) {
    SenderPart& part = sender_part(p);
    SenderLoad& l = p.job->transport->senders.at(part.load);
    if (l.room() <= 0) {
        l.blocked = true;
        return false;
    }
    if (part.rule && part.rule_room() <= 0) {
        part.rule->blocked = true;
        return false;
    }
    return true;
}
// Waiting entries of queue `q`, not held back, that sender limits and
// rules stop now: what select_transport() and destination_waits() do not
// count.
inline int sender_stopped(const Queue& q) {
    int n = 0;
    const SenderBook& b = q.transport->senders;
    for (const SenderPart& part : q.senders)
        n += part.stopped(part.room(b.at(part.load)));
    return n;
}

} // namespace cqmgr::core
