// Slow-destination isolation (cqmgr_destination_agent_share; docs/admin-
// guide.md, "Destination shares"): on each transport with a destination
// share, each delivery's time and outcome (its hop status classified by
// reply_class.hpp: a timeout or a dropped connection) go to the policy
// (isolation_policy.hpp), and so does each destination's death; what the
// policy decides is logged, one line per change, and handed to the
// scheduler as the destination's lowered share (through CoreRequests: a
// death is news from inside the scheduler).
#pragma once

#include "clock.hpp"
#include "core_requests.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "delivery_observer.hpp"
#include "isolation_policy.hpp"
#include "reply_class.hpp"

namespace cqmgr::qmgr {

class Isolation : public DeliveryObserver {
  public:
    Isolation(const conf::QmgrParams& params, CoreRequests& core, const WallClock& clock);

    // Whether transport `t` has destination shares.
    static bool covers(const core::Transport& t) { return core::share_full(t) > 0; }
    // Entry `e`'s delivery ended with `r` at `now_ms`, `elapsed_ms` after
    // it was sent (before the scheduler hears of it).
    void delivered(const core::Entry& e, const core::DeliveryResult& r, int64_t elapsed_ms,
                   int64_t now_ms);
    // Queue `q` died (a failed cohort or a shared dead mark).
    void died(const core::Queue& q, int64_t now_ms);
    // Gives back shares that have been quiet long enough (at most once a
    // second).
    void sweep(int64_t now_ms);
    // What the policy knows (for cqmgrctl).
    const IsolationPolicy& policy() const { return policy_; }

    // DeliveryObserver: the outcomes, the deaths and the upkeep above.
    void delivery_ended(DeliveryEvent& ev) override;
    void queue_window(const core::Queue& q, bool positive, QueueTurn turn) override;
    void before_selection(const WallClock& clock) override { sweep(clock.now_ms()); }

  private:
    // Logs `change` and hands it to the scheduler.
    void apply(const IsolationPolicy::Change& change, const core::Transport* t,
               const std::string& words);

    ReplyClassifier classifier_;
    IsolationPolicy policy_;
    CoreRequests& core_;
    const WallClock& clock_;
    int64_t forget_seconds_;
    int64_t last_sweep_ms_ = 0;
};

// The settings of the policy from main.cf.
IsolationSettings isolation_settings(const conf::QmgrParams& params);

} // namespace cqmgr::qmgr
