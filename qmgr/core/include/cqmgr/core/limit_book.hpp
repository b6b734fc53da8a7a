// The bounds kept by name (see limits.hpp): the administrator's suspensions
// and caps, the learned limits, the lowered destination shares and the
// reply rules' actions.  They
// are kept by what they name, not on the queues, so that they outlast the
// queues they cover: an empty queue is let go as usual, and the queue
// created for the next recipient (or after a restart, when the settings
// were loaded before any mail) picks them up again.  The scheduler asks the
// book when a queue is created and when a setting changes; selection reads
// only the copy on each queue (Queue::limits).  The gate is not kept here:
// it is the driver's, for one queue, and goes with it.
#pragma once

#include "cqmgr/core/limits.hpp"

#include <map>
#include <optional>
#include <string>

namespace cqmgr::core {

class LimitBook {
  public:
    // Makes `change` to what is kept for `target`; an empty value (no
    // hold, no cap, nothing learned, share 0) removes the bound.  Returns
    // whether anything changed.  Panics when the bound cannot name `target`
    // (a hold of nothing; a cap of a whole transport; a learned limit or a
    // share of other than one queue of one transport; a rule's action
    // without a transport; any gate) or when its value is out of range (a
    // cap below 1, a negative limit, share or pause).
    bool set(const AdminTarget& target, const LimitChange& change);
    // Ends the hold, cap, rule's action or learned hold (not what was
    // learned) of `target` that was to end at `until`; false when it was
    // replaced or removed since.
    bool expire(Bound which, const AdminTarget& target, int64_t until);
    // The bounds kept for queue `queue` of transport `transport`, whose
    // transport gives each queue a share of `full_share` (0 = none): the
    // hold and cap of exactly that queue, else of its name on any
    // transport; its learned limit; the lower of the full and its lowered
    // share; the rule's action of that queue, else of its whole transport.
    // No gate.
    Limits covering(const std::string& transport, const std::string& queue, int full_share) const;
    // The suspension of the whole transport `transport`, if any.
    std::optional<AdminHold> transport_hold(const std::string& transport) const;
    // Nothing is kept: a new queue has no bound but its transport's share.
    bool empty() const {
        return holds_.empty() && caps_.empty() && learned_.empty() && shares_.empty() &&
               rules_.empty();
    }
    const std::map<AdminTarget, AdminHold>& holds() const { return holds_; }
    const std::map<AdminTarget, AdminCap>& caps() const { return caps_; }
    const std::map<AdminTarget, LearnedLimit>& learned() const { return learned_; }
    // A lowered share: its agents, and whether it binds even while no
    // other destination waits (Limits::share_always).
    struct Share {
        int agents = 0;
        bool always = false;
        bool operator==(const Share&) const = default;
    };
    const std::map<AdminTarget, Share>& shares() const { return shares_; }
    const std::map<AdminTarget, RuleLimit>& rules() const { return rules_; }
    // Panics on a setting that set() would not have kept.
    void check() const;

  private:
    std::map<AdminTarget, AdminHold> holds_;
    std::map<AdminTarget, AdminCap> caps_;
    std::map<AdminTarget, LearnedLimit> learned_;
    std::map<AdminTarget, Share> shares_;    // lowered shares
    std::map<AdminTarget, RuleLimit> rules_; // a queue's or a whole transport's
};

} // namespace cqmgr::core
